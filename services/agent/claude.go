package agent

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dshgo/harness/services/agent/lifecycle"
	"github.com/dshgo/harness/services/tools"
)

// ClaudeTranscriptPath returns where session id's transcript in Claude Code's
// JSONL format is kept: <stateDir>/sessions/claude/<id>.jsonl, beside the
// session log (a subdirectory, so session listings do not see it).
func ClaudeTranscriptPath(stateDir, id string) string {
	return filepath.Join(SessionsDir(stateDir), "claude", id+".jsonl")
}

// claudeTranscriptFor returns the Claude-format transcript path of session
// id whose log is at location: beside it when the log is a file (the JSONL
// store), else under a per-user directory in the system temp directory.
func claudeTranscriptFor(location, id string) string {
	if filepath.IsAbs(location) {
		return filepath.Join(filepath.Dir(location), "claude", id+".jsonl")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("harness-transcripts-%d", os.Getuid()), id+".jsonl")
}

// claudeTranscript appends a session's conversation to a file in the
// format Claude Code writes its transcripts in, for hook scripts that read
// `transcript_path` (a Stop hook looking at the last assistant message): one
// JSON object per line, `type` user or assistant, `message.content` a string
// (a user prompt) or a list of content blocks (`text`, `thinking`,
// `tool_use` with Claude's tool names, `tool_result`), linked by
// uuid/parentUuid. Lines are written as records are made, including records
// a running turn still holds back from the session log, so a hook always
// sees the conversation up to its event. The file is 0600 in a 0700
// directory, created with the first line (a session that never logs leaves
// no file). A write failure is logged once and disables the transcript.
type claudeTranscript struct {
	path, sessionID, cwd string

	mu     sync.Mutex
	parent string
	failed bool
	// The state at the start of the running turn (mark), restored when the
	// turn's records are dropped (rollback).
	markSize   int64 // -1: the file did not exist
	markParent string
}

// mark remembers the transcript's state at the start of a turn.
func (t *claudeTranscript) mark() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.markSize, t.markParent = -1, t.parent
	if st, err := os.Stat(t.path); err == nil {
		t.markSize = st.Size()
	}
}

// rollback takes back the lines of a turn whose records were dropped (a
// turn refused before its first model call leaves no trace, in the session
// log or here).
func (t *claudeTranscript) rollback() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.markSize < 0 {
		_ = os.Remove(t.path)
		_ = os.Remove(filepath.Dir(t.path)) // only when no other session's transcript is there
	} else {
		_ = os.Truncate(t.path, t.markSize)
	}
	t.parent = t.markParent
}

// claudeLine is one line of a Claude Code transcript.
type claudeLine struct {
	ParentUUID  *string       `json:"parentUuid"`
	IsSidechain bool          `json:"isSidechain"`
	UserType    string        `json:"userType"`
	Cwd         string        `json:"cwd"`
	SessionID   string        `json:"sessionId"`
	Version     string        `json:"version"`
	Type        string        `json:"type"`
	IsMeta      bool          `json:"isMeta,omitempty"`
	Message     claudeMessage `json:"message"`
	UUID        string        `json:"uuid"`
	Timestamp   string        `json:"timestamp"`
}

type claudeMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // a string, or []claudeBlock
}

type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   *bool           `json:"is_error,omitempty"`
}

// lineOf renders rec as a transcript line; ok is false for records that are
// not conversation (headers, usage, tool calls, which the assistant line
// already carries).
func lineOf(rec Record) (l claudeLine, ok bool) {
	m := rec.Message
	if m == nil {
		return l, false
	}
	switch rec.Type {
	case RecordUser:
		l.Type, l.IsMeta = "user", rec.Source != ""
		l.Message = claudeMessage{Role: "user", Content: m.Content}
	case RecordAssistant:
		var blocks []claudeBlock
		if m.Reasoning != "" {
			blocks = append(blocks, claudeBlock{Type: "thinking", Thinking: m.Reasoning})
		}
		if m.Content != "" {
			blocks = append(blocks, claudeBlock{Type: "text", Text: m.Content})
		}
		for _, tc := range m.ToolCalls {
			input := json.RawMessage(tc.Arguments)
			if tc.ArgumentsError != "" || !json.Valid(input) {
				input = json.RawMessage(`{}`)
			}
			blocks = append(blocks, claudeBlock{Type: "tool_use", ID: tc.ID, Name: lifecycle.ClaudeToolName(tc.Name), Input: input})
		}
		if blocks == nil {
			blocks = []claudeBlock{}
		}
		l.Type = "assistant"
		l.Message = claudeMessage{Role: "assistant", Content: blocks}
	case RecordToolResult:
		text, isErr := m.Content, rec.IsError
		if text == "" && len(rec.Content) > 0 {
			text = tools.TextOf(rec.Content)
		}
		id := m.ToolCallID
		if id == "" {
			id = rec.CallID
		}
		l.Type = "user"
		l.Message = claudeMessage{Role: "user", Content: []claudeBlock{{Type: "tool_result", ToolUseID: id, Content: &text, IsError: &isErr}}}
	default:
		return l, false
	}
	return l, true
}

// add appends rec's line, if it has one.
func (t *claudeTranscript) add(rec Record, log func(msg string, args ...any)) {
	if t == nil {
		return
	}
	l, ok := lineOf(rec)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failed {
		return
	}
	var id [16]byte
	_, _ = rand.Read(id[:])
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	h := hex.EncodeToString(id[:])
	uuid := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	if t.parent != "" {
		p := t.parent
		l.ParentUUID = &p
	}
	l.UserType, l.Cwd, l.SessionID, l.Version, l.UUID = "external", t.cwd, t.sessionID, "harness", uuid
	ts := rec.Time
	if ts.IsZero() {
		ts = time.Now()
	}
	l.Timestamp = ts.UTC().Format("2006-01-02T15:04:05.000Z")
	if err := t.append(l); err != nil {
		t.failed = true
		log("Claude-format transcript disabled for this session", "path", t.path, "err", err)
		return
	}
	t.parent = uuid
}

func (t *claudeTranscript) append(l claudeLine) error {
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(t.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("append: %w", err)
	}
	return nil
}
