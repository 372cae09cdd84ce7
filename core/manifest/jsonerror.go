package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// JSONError places an error from decoding data, the contents of file, as JSON
// at file:line:col, the way every other configuration error names its place:
//
//	.mcp.json:2:20: json: cannot unmarshal number into Go struct field ServerConfig.mcpServers.command of type string
//
// The place is the byte at which the decoder stopped: the offending character
// of a *json.SyntaxError, the end of a scalar (or the opening bracket of an
// array or object) of a *json.UnmarshalTypeError, the last byte for an
// unexpected end of input (io.ErrUnexpectedEOF, from a json.Decoder); a
// syntax error or an unexpected end is said to be "invalid JSON". Lines
// and columns count from 1; columns count bytes. Any other error is returned
// as "file: err". The result wraps err. An empty file omits the "file:" part.
func JSONError(file string, data []byte, err error) error {
	if err == nil {
		return nil
	}
	off, what := int64(-1), ""
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off, what = se.Offset, "invalid JSON: "
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		off, what = int64(len(data)), "invalid JSON: "
	}
	prefix := ""
	if file != "" {
		prefix = file + ":"
	}
	if off < 0 {
		if prefix == "" {
			return err
		}
		return fmt.Errorf("%s %w", prefix, err)
	}
	line, col := JSONPosition(data, off)
	return fmt.Errorf("%s%d:%d: %s%w", prefix, line, col, what, err)
}

// JSONPosition returns the 1-based line and byte column in data of the byte
// that an encoding/json error offset (Offset of *json.SyntaxError or
// *json.UnmarshalTypeError: "after reading Offset bytes") points after: the
// byte at off-1. off is clamped to [1, len(data)]; for empty data it is 1:1.
func JSONPosition(data []byte, off int64) (line, col int) {
	i := min(max(off-1, 0), int64(len(data)))
	before := data[:i]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}
