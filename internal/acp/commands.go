package acp

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/commands"
)

// availableCommands lists the harness's slash commands that run here:
// those of the commands registry with a Run (command files, /help,
// plugins' commands); the terminal UI's own (/model, /clear, …) are left
// out. Nil without a commands row.
func availableCommands(root *core.Context) []sdk.AvailableCommand {
	reg, ok := core.Lookup(root, commands.Key)
	if !ok || reg == nil {
		return nil
	}
	out := []sdk.AvailableCommand{}
	for _, c := range reg.List() {
		if c.Run == nil {
			continue
		}
		ac := sdk.AvailableCommand{Name: c.Name, Description: c.Summary}
		if c.Args != "" {
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: c.Args}}
		}
		out = append(out, ac)
	}
	return out
}

// commandsUpdate is the session's available_commands_update (false: the
// harness has no commands row).
func commandsUpdate(root *core.Context) (sdk.SessionUpdate, bool) {
	cmds := availableCommands(root)
	if cmds == nil {
		return sdk.SessionUpdate{}, false
	}
	return sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: cmds}}, true
}

// expand runs a prompt that is `/name args` for a registered command: the
// command's text (if any) is sent as message text, and its prompt (if
// any) is what the turn runs; run is false when nothing is left to send
// to the model. A terminal UI command is answered with a message saying
// so; a `/word` that names no command is a prompt as written.
func (ss *session) expand(ctx context.Context, text string) (prompt string, run bool, err error) {
	name, args, ok := commands.Parse(text)
	if !ok {
		return text, true, nil
	}
	reg, ok := core.Lookup(ss.host.Root, commands.Key)
	if !ok || reg == nil {
		return text, true, nil
	}
	cmd, ok := reg.Lookup(name)
	if !ok {
		return text, true, nil
	}
	if cmd.Run == nil {
		ss.say(fmt.Sprintf("/%s is a command of the terminal UI (harness chat); it does nothing here.", name))
		return "", false, nil
	}
	rep, err := cmd.Run(ctx, commands.Invocation{Args: args, Session: ss.ss})
	if err != nil {
		return "", false, fmt.Errorf("/%s: %w", name, err)
	}
	if rep.Text != "" {
		ss.say(strings.TrimRight(rep.Text, "\n") + "\n")
	}
	return rep.Prompt, rep.Prompt != "", nil
}

// say sends text as a message of the session.
func (ss *session) say(text string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.sendLocked(sdk.UpdateAgentMessageText(text))
}

// afterResponse runs send once a response naming session id has been
// written to the client (session/new's result), on a goroutine the server
// waits for: an update about a new session must follow its id.
func (s *server) afterResponse(id string, send func()) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	if s.hooks == nil {
		s.hooks = map[string]func(){}
	}
	s.hooks[id] = send
}

// written is the output writer's hook: it starts the afterResponse
// function of the session whose id a response line names.
func (s *server) written(line []byte) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	if s.hooksClosed || len(s.hooks) == 0 || !bytes.Contains(line, []byte(`"result"`)) || bytes.Contains(line, []byte(`"method"`)) {
		return
	}
	for id, send := range s.hooks {
		if bytes.Contains(line, []byte(`"sessionId":"`+id+`"`)) {
			delete(s.hooks, id)
			s.bg.Add(1)
			go func() {
				defer s.bg.Done()
				send()
			}()
		}
	}
}

// closeHooks drops the afterResponse functions not started and waits for
// those that were.
func (s *server) closeHooks() {
	s.hookMu.Lock()
	s.hooksClosed = true
	clear(s.hooks)
	s.hookMu.Unlock()
	s.bg.Wait()
}
