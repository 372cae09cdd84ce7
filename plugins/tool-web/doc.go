// Package toolweb is the tool-web plugin: web_fetch (a URL as Markdown)
// and web_search (a query through a configured provider), held to the
// same network policy as a sandboxed command.
//
//	web_fetch(url, prompt?)
//	  │  permission rules: web_fetch(domain:HOST)      (plugin permission)
//	  ▼
//	host gate: the subprocess row's sandbox network    (allowedDomains /
//	  │        deniedDomains / ask, as the proxy decides for bash)
//	  ▼
//	dial gate: the resolved address, checked at connect time: loopback,
//	  │        private, link-local, CGNAT, unspecified and multicast
//	  │        addresses refused unless allowed (DNS rebinding included)
//	  ▼
//	GET (http/https only; same-host redirects followed and re-checked,
//	  │  a redirect to another host returned to the model as a new URL)
//	  ▼
//	HTML → Markdown; other text as is; binary refused; cached per session
//
// web_search is registered only when config.search names a provider
// (searxng or brave); its provider's host passes the same two gates.
//
// prompt is not run through a model: the result is the page, headed by
// the prompt, for the calling model to answer from.
package toolweb
