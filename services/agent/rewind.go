package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/dshgo/harness/services/sessions"
)

// ErrTurnNotInView is RewindConversation's error for a turn whose prompt
// is not in the history: unknown, already rewound away, or summarized by
// a compaction.
var ErrTurnNotInView = errors.New("the turn's prompt is not in the conversation")

// RewindConversation takes the conversation back to before the prompt of
// user turn turn (1-based, as the session log and checkpoints number
// them): that prompt and everything after it leave the history the model
// is sent, and a rewind record in the log makes a resumed session see the
// same. Nothing is deleted from the log. The files are not touched (the
// checkpoint row restores those). It fails with ErrBusy while a turn or a
// compaction runs, and with ErrTurnNotInView when the turn's prompt is
// not in the history.
func (ss *Session) RewindConversation(ctx context.Context, turn int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ss.turnMu.Lock()
	if ss.running {
		ss.turnMu.Unlock()
		return ErrBusy
	}
	ss.running = true
	ss.turnMu.Unlock()
	defer func() { ss.turnMu.Lock(); ss.running = false; ss.turnMu.Unlock() }()

	ss.mu.Lock()
	i, ok := ss.turnStart[turn]
	if !ok || i > len(ss.history) {
		ss.mu.Unlock()
		return fmt.Errorf("rewind to turn %d: %w (a compaction summarizes the turns before it; rewind the files alone)", turn, ErrTurnNotInView)
	}
	ss.mu.Unlock()
	if err := ss.write(Record{Type: RecordRewind, Turn: turn}); err != nil {
		return err
	}
	ss.mu.Lock()
	ss.history = cutView(ss.history, i, ss.turnStart)
	ss.lastSnapshot = "" // the snapshot may have been cut away: send it again
	ss.interrupted = nil // their calls are cut away, or were answered
	ss.mu.Unlock()
	return nil
}

// RewindStored is RewindConversation for a session no process has open:
// it appends the rewind record to session id's log in store, after
// checking that turn's prompt is in the conversation the log replays. It
// fails with an *SessionInUseError while a process has the session open.
func RewindStored(ctx context.Context, store *sessions.Service, id string, turn int) error {
	w, stored, err := store.Open(ctx, id)
	if err != nil {
		return err
	}
	defer w.Close()
	recs, err := DecodeRecords(stored)
	if err != nil {
		return err
	}
	if _, starts := replayView(recs); !hasTurn(starts, turn) {
		return fmt.Errorf("rewind to turn %d: %w (a compaction summarizes the turns before it; rewind the files alone)", turn, ErrTurnNotInView)
	}
	e, err := Record{Type: RecordRewind, Turn: turn}.Entry()
	if err != nil {
		return err
	}
	_, err = w.Append(ctx, e)
	return err
}

func hasTurn(starts map[int]int, turn int) bool {
	_, ok := starts[turn]
	return ok
}
