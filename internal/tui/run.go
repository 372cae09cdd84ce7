package tui

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Run shows the UI until the user leaves (/exit, Ctrl+C twice) or ctx
// ends, then withdraws the approval answerer and closes the session.
// Extra program options are for tests (input, output, window size).
func Run(ctx context.Context, o Options, extra ...tea.ProgramOption) error {
	if o.Agent == nil || o.Root == nil {
		return errors.New("tui: Options.Agent and Options.Root are required")
	}
	m := New(o)
	p := tea.NewProgram(m, append([]tea.ProgramOption{tea.WithContext(ctx)}, extra...)...)
	release, err := m.Bind(p.Send)
	if err != nil {
		return err
	}
	_, runErr := p.Run()
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	relErr := release(stopCtx)
	if runErr != nil && !errors.Is(runErr, tea.ErrProgramKilled) && !errors.Is(runErr, context.Canceled) {
		return fmt.Errorf("tui: %w", runErr)
	}
	return relErr
}
