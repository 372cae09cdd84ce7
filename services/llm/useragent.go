package llm

// UserAgent is the User-Agent header value provider adapters send with
// every model request, e.g. "harness/v1.2.3". The harness CLI sets it at
// initialisation from its version; an empty value leaves the adapter's
// client library default. Assign it only before any adapter is built (in
// an init function or at the top of main): it is read without locking.
var UserAgent = ""
