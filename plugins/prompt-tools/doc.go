// Package prompttools is the "prompt-tools" plugin: it offers the tool
// registry's schemas (services/tools) to system-prompt assembly
// (services/systemprompt), so that Assembly.Tools, toolOrder and
// `harness prompt --json` see the tools the model will get.
//
// Neither service imports the other; this plugin injects both and registers
// a systemprompt.ToolProvider that projects Registry.Schemas(scope) for each
// assembly. It activates when both services are present and is withdrawn
// with either (the Cordis way), so mounting order in harness.yml does not
// matter.
//
// Known names: the registry exposes only the schemas visible in a scope
// (after restriction), so toolOrder may list only tools visible in every
// scope that is assembled; a listed tool hidden by a restriction fails that
// scope's assembly with "toolOrder lists unregistered tool".
package prompttools
