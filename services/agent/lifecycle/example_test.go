package lifecycle_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent/lifecycle"
)

// The agent loop fires UserPromptSubmit before a prompt reaches the model; a
// policy plugin listens, calls next, and folds its answer in with Merge.
func Example() {
	root := core.NewRoot()
	defer root.Dispose(context.Background())

	policy := core.Define("no-secrets", func(c *core.Context, _ struct{}) error {
		return core.On(c, lifecycle.UserPromptSubmit, func(ctx context.Context, p lifecycle.Prompt, next core.Next[lifecycle.Prompt, lifecycle.Decision]) (lifecycle.Decision, error) {
			mine := lifecycle.Decision{AdditionalContext: []string{"session " + p.Session.ID}}
			if strings.Contains(p.Prompt, "password") {
				mine = lifecycle.Decision{Block: true, Reason: "the prompt mentions a password"}
			}
			rest, err := next(ctx, p)
			return mine.Merge(rest), err
		})
	})
	if err := root.Context().Plugin(policy, nil).Await(context.Background()); err != nil {
		panic(err)
	}

	session := core.NewScopeID("s-1", nil)
	for _, text := range []string{"fix the build", "my password is hunter2"} {
		d, err := lifecycle.UserPromptSubmit.Run(context.Background(), root.Context().To(session), lifecycle.Prompt{Session: lifecycle.Session{ID: "s-1"}, Prompt: text}, lifecycle.Pass[lifecycle.Prompt])
		fmt.Printf("%q: block=%v reason=%q context=%q err=%v\n", text, d.Block, d.Reason, d.AdditionalContext, err)
	}
	// Output:
	// "fix the build": block=false reason="" context=["session s-1"] err=<nil>
	// "my password is hunter2": block=true reason="the prompt mentions a password" context=[] err=<nil>
}

func ExampleDecision_Merge() {
	a := lifecycle.Decision{AdditionalContext: []string{"a"}, Env: map[string]string{"GREETING": "hi", "STAGE": "dev"}}
	b := lifecycle.Decision{Block: true, Reason: "stop", AdditionalContext: []string{"b"}, Env: map[string]string{"STAGE": "prod"}}
	fmt.Printf("%+v\n", a.Merge(b))
	// Output: {Block:true Reason:stop AdditionalContext:[a b] Halt:false HaltReason: Env:map[GREETING:hi STAGE:prod]}
}
