// Package approval provides the approval service (tools.ApprovalKey) that
// resolves a pre-execute "ask": the tool registry calls Service.Ask and only a
// grant lets the call proceed to the guards (dsh tools-and-prompt A10).
//
//	registry ── ask ──► Service.Ask ──► session grants ("always" answers)
//	                           │
//	                           └──► Answerer: terminal prompt on /dev/tty
//	                                          or headless: unavailable
//
// Who answers is the plugin's `answerer` setting: `terminal` prompts on the
// controlling terminal, `headless` answers nothing (ApprovalUnavailable, a
// denial), and `auto` (the default) picks terminal when standard input is a
// TTY. A plugin may also provide tools.AnswererKey (a chat UI, an IDE bridge);
// while it is mounted, questions go to it. A headless service reports why in Unanswerable(), so the permission
// plugin can turn its asks into denials whose reason names the rule to add.
//
// A request names the rules an "always" answer adds (AlwaysRules; the
// terminal prompt shows them as "always adds: …"). An answerer implementing
// [tools.DetailedAnswerer] may give a rejection a reason, which becomes the denied
// tool result the model reads; the service returns it from AskDetailed.
//
// Answers: y = allowed-once, a = allowed-always (remembered for the session:
// the same tool with the same arguments in the same scope is granted without
// asking, and OnAllowedAlways listeners such as the permission plugin may
// widen that), n or an empty line = rejected, end of input or cancellation =
// cancelled. Prompts are serialized: one question on the terminal at a time.
// Text from the model is shown with control characters escaped, so arguments
// cannot redraw the prompt.
package approval
