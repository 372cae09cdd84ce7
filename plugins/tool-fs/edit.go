package toolfs

import "strings"

// LineEndings is a file's line-ending style.
type LineEndings int

const (
	// LF is "\n" line endings.
	LF LineEndings = iota
	// CRLF is "\r\n" line endings.
	CRLF
)

// lineEndingSample is how many leading bytes decide a file's line-ending style.
const lineEndingSample = 4096

// DetectLineEndings reports CRLF when the first 4096 bytes of raw hold more
// "\r\n" than bare "\n" terminators, else LF.
func DetectLineEndings(raw string) LineEndings {
	sample := raw
	if len(sample) > lineEndingSample {
		sample = sample[:lineEndingSample]
	}
	crlf := strings.Count(sample, "\r\n")
	lf := strings.Count(sample, "\n") - crlf
	if crlf > lf {
		return CRLF
	}
	return LF
}

// NormalizeLineEndings turns every "\r\n" into "\n".
func NormalizeLineEndings(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// RestoreLineEndings writes LF-normalized content back in style le.
func RestoreLineEndings(content string, le LineEndings) string {
	if le == LF {
		return content
	}
	return strings.ReplaceAll(NormalizeLineEndings(content), "\n", "\r\n")
}

// ApplyLiteralEdit replaces old with new in content, all three LF-normalized by
// the caller. Occurrences are counted left to right without overlap. Zero
// occurrences fail with FS_EDIT_NOT_FOUND; more than one without replaceAll fails
// with FS_AMBIGUOUS_EDIT (the B4 wording, naming displayPath and the count).
func ApplyLiteralEdit(content, old, new string, replaceAll bool, displayPath string) (string, error) {
	if old == "" {
		return "", fsErrorf(CodeEditNotFound, "old_string must be a non-empty string")
	}
	n := strings.Count(content, old)
	switch {
	case n == 0:
		return "", fsErrorf(CodeEditNotFound, "old_string was not found in %q", displayPath)
	case n > 1 && !replaceAll:
		return "", fsErrorf(CodeAmbiguousEdit, "old_string matched %d times in %q; provide a more specific old_string or set replace_all to true", n, displayPath)
	case replaceAll:
		return strings.ReplaceAll(content, old, new), nil
	default:
		return strings.Replace(content, old, new, 1), nil
	}
}

// FormatEdit is the model-facing success text of edit (B4).
func FormatEdit(path string, replaceAll bool) string {
	if replaceAll {
		return "The file " + path + " has been updated. All occurrences were successfully replaced."
	}
	return "The file " + path + " has been updated successfully."
}

// FormatWrite is the model-facing success envelope of write (B3): "Created file"
// or "Updated file" inside the path/type/content envelope; no content is echoed.
func FormatWrite(path string, operation string) string {
	verb := "Updated"
	if operation == OpCreate {
		verb = "Created"
	}
	return "<path>" + path + "</path>\n<type>file</type>\n<content>\n" + verb + " file\n</content>"
}
