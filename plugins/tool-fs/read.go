package toolfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Read defaults (dsh `readLimit`, `readMaxLineLength`, `readMaxBytes`).
const (
	// DefaultReadLimit is both the default and the maximum number of lines one read returns.
	DefaultReadLimit = 2000
	// DefaultMaxLineLength is the longest line returned, in characters (Unicode code points);
	// longer lines are cut and marked "... (line truncated to 2000 chars)".
	DefaultMaxLineLength = 2000
	// DefaultMaxBytes caps the selected output of one read, in bytes (UTF-8 text plus
	// one newline between lines). A window that would exceed it stops early with the
	// "Output capped" footer.
	DefaultMaxBytes = 50 * 1024
)

// readChunkBytes is the size of one read(2) while scanning a file.
const readChunkBytes = 64 * 1024

// Window is one resolved read request. The caller has applied defaults and caps.
type Window struct {
	// Offset is the 1-based first line to return.
	Offset int
	// Limit is the maximum number of lines to return.
	Limit int
	// MaxLineLength is the longest line kept, in code points.
	MaxLineLength int
	// MaxBytes caps the selected output, in bytes.
	MaxBytes int
}

// Line is one numbered line of a text file, without its line terminator
// (a trailing "\r" of a CRLF file is removed too).
type Line struct {
	// Number is the 1-based line number in the file.
	Number int `json:"number"`
	// Text is the line, possibly cut to the line-length cap.
	Text string `json:"text"`
}

// WindowResult is what BuildWindow selects from a file.
type WindowResult struct {
	// Lines are the returned lines, in file order.
	Lines []Line
	// TotalLines is the exact number of lines in the file ("a\nb" and "a\nb\n" both have 2).
	TotalLines int
	// TruncatedByBytes reports that the byte cap stopped the window early.
	TruncatedByBytes bool
}

type windowScan struct {
	req      Window
	res      WindowResult
	outBytes int
	line     []byte // current line, capped at lineCap bytes
	lineCap  int
	overflow bool // current line exceeded lineCap
	pending  bool // once full: an unterminated line follows the last newline
}

// full reports that no further line can enter the window: the rest of the
// file is only counted.
func (s *windowScan) full() bool {
	return s.res.TruncatedByBytes || len(s.res.Lines) >= s.req.Limit
}

// BuildWindow scans r to its end and returns the requested window plus the exact
// total line count. It holds at most one chunk and one capped line in memory, so
// a giant file or a giant newline-free line cannot grow memory without bound.
// It fails with FS_NOT_TEXT on a NUL byte or invalid UTF-8 anywhere in the file,
// and with FS_NOT_FOUND when Offset lies past the last line (offset 1 of an empty
// file is fine). displayPath names the file in those messages.
func BuildWindow(r io.Reader, req Window, displayPath string) (WindowResult, error) {
	s := &windowScan{req: req, lineCap: (req.MaxLineLength + 1) * utf8.UTFMax}
	buf := make([]byte, readChunkBytes+utf8.UTFMax)
	carry := 0
	for {
		n, err := r.Read(buf[carry : carry+readChunkBytes])
		data := buf[:carry+n]
		complete, rest := splitCompleteRunes(data)
		if !utf8.Valid(complete) {
			return WindowResult{}, notText(displayPath, "invalid UTF-8 text")
		}
		if bytes.IndexByte(complete, 0) >= 0 {
			return WindowResult{}, notText(displayPath, "binary file")
		}
		s.scan(complete)
		carry = copy(buf, rest)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return WindowResult{}, &Error{Code: CodeIO, Message: fmt.Sprintf("cannot read %q: %v", displayPath, err), Err: err}
		}
	}
	if carry > 0 {
		return WindowResult{}, notText(displayPath, "invalid UTF-8 text")
	}
	if len(s.line) > 0 || s.overflow {
		s.flush()
	} else if s.pending {
		s.res.TotalLines++
	}
	res := s.res
	if !res.TruncatedByBytes && req.Offset > res.TotalLines && !(res.TotalLines == 0 && req.Offset == 1) {
		return WindowResult{}, fsErrorf(CodeNotFound, "offset %d is out of range for %q (%d lines)", req.Offset, displayPath, res.TotalLines)
	}
	return res, nil
}

func notText(displayPath, why string) *Error {
	return fsErrorf(CodeNotText, "cannot read %q: %s", displayPath, why)
}

// splitCompleteRunes splits b before a trailing incomplete UTF-8 sequence, which
// the next chunk may complete.
func splitCompleteRunes(b []byte) (complete, rest []byte) {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i], b[i:]
			}
			break
		}
	}
	return b, nil
}

func (s *windowScan) scan(data []byte) {
	for len(data) > 0 {
		if s.full() && len(s.line) == 0 && !s.overflow {
			if n := bytes.Count(data, []byte{'\n'}); n > 0 {
				s.res.TotalLines += n
				s.pending = data[len(data)-1] != '\n'
			} else {
				s.pending = true
			}
			return
		}
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			s.appendLine(data)
			return
		}
		s.appendLine(data[:nl])
		s.flush()
		data = data[nl+1:]
	}
}

func (s *windowScan) appendLine(seg []byte) {
	if s.overflow {
		return
	}
	room := s.lineCap - len(s.line)
	if len(seg) > room {
		s.line = append(s.line, seg[:room]...)
		s.overflow = true
		return
	}
	s.line = append(s.line, seg...)
}

func (s *windowScan) flush() {
	s.res.TotalLines++
	line, overflow := s.line, s.overflow
	s.line, s.overflow = s.line[:0], false
	if s.res.TruncatedByBytes || s.res.TotalLines < s.req.Offset || len(s.res.Lines) >= s.req.Limit {
		return
	}
	if !overflow && len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	text := truncateLine(line, s.req.MaxLineLength, overflow)
	size := len(text)
	if len(s.res.Lines) > 0 {
		size++
	}
	if s.outBytes+size > s.req.MaxBytes {
		s.res.TruncatedByBytes = true
		return
	}
	s.outBytes += size
	s.res.Lines = append(s.res.Lines, Line{Number: s.res.TotalLines, Text: text})
}

// truncateLine keeps the first max code points of line and marks the cut.
func truncateLine(line []byte, max int, overflow bool) string {
	if !overflow && utf8.RuneCount(line) <= max {
		return string(line)
	}
	cut, n := 0, 0
	for cut < len(line) && n < max {
		_, size := utf8.DecodeRune(line[cut:])
		cut += size
		n++
	}
	return string(line[:cut]) + "... (line truncated to " + strconv.Itoa(max) + " chars)"
}

// ReadValue is the canonical value of the read tool (dsh shape).
type ReadValue struct {
	// Path is the absolute path that was read.
	Path string `json:"path"`
	// Offset is the 1-based first line requested.
	Offset int `json:"offset"`
	// Lines is the returned window.
	Lines []Line `json:"lines"`
	// TotalLines is the exact line count of the file.
	TotalLines int `json:"totalLines"`
}

// FormatRead renders a read value as the model-facing envelope of B2:
//
//	<path>P</path>
//	<type>file</type>
//	<content>
//	N: text ...
//	(blank line)
//	footer
//	</content>
//
// The footer is "(Output capped. Showing lines S-E. Use offset=E+1 to continue.)"
// when the byte cap stopped the window (fewer than limit lines returned before the
// end of the file), "(Showing lines S-E of T. Use offset=E+1 to continue.)" when
// lines remain, and "(End of file - total T lines)" otherwise. An empty window
// shows only the footer.
func FormatRead(v ReadValue, limit int) string {
	end := v.Offset - 1
	if end < 0 {
		end = 0
	}
	if len(v.Lines) > 0 {
		end = v.Lines[len(v.Lines)-1].Number
	}
	capped := len(v.Lines) < limit && end < v.TotalLines
	var footer string
	switch {
	case capped:
		footer = fmt.Sprintf("(Output capped. Showing lines %d-%d. Use offset=%d to continue.)", v.Offset, end, end+1)
	case end < v.TotalLines:
		footer = fmt.Sprintf("(Showing lines %d-%d of %d. Use offset=%d to continue.)", v.Offset, end, v.TotalLines, end+1)
	default:
		footer = fmt.Sprintf("(End of file - total %d lines)", v.TotalLines)
	}
	var b strings.Builder
	b.WriteString("<path>")
	b.WriteString(v.Path)
	b.WriteString("</path>\n<type>file</type>\n<content>\n")
	for _, l := range v.Lines {
		b.WriteString(strconv.Itoa(l.Number))
		b.WriteString(": ")
		b.WriteString(l.Text)
		b.WriteByte('\n')
	}
	if len(v.Lines) > 0 {
		b.WriteByte('\n')
	}
	b.WriteString(footer)
	b.WriteString("\n</content>")
	return b.String()
}
