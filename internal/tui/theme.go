package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// theme holds the styles of one colour scheme.
type theme struct {
	dark    bool
	noColor bool
	user    lipgloss.Style
	dim     lipgloss.Style
	accent  lipgloss.Style
	ok      lipgloss.Style
	bad     lipgloss.Style
	warn    lipgloss.Style
	added   lipgloss.Style
	removed lipgloss.Style
	status  lipgloss.Style
	modal   lipgloss.Style
	chosen  lipgloss.Style
}

// newTheme returns the theme for a dark or light background; noColor (the
// NO_COLOR convention) keeps only bold, faint and reverse.
func newTheme(dark, noColor bool) theme {
	fg := func(darkC, lightC string) color.Color {
		if noColor {
			return lipgloss.NoColor{}
		}
		if dark {
			return lipgloss.Color(darkC)
		}
		return lipgloss.Color(lightC)
	}
	s := lipgloss.NewStyle
	t := theme{dark: dark, noColor: noColor}
	t.user = s().Bold(true).Foreground(fg("#8ab4f8", "#1a56b0"))
	t.dim = s().Faint(true).Foreground(fg("#9a9a9a", "#6a6a6a"))
	t.accent = s().Bold(true).Foreground(fg("#c792ea", "#7a3eb0"))
	t.ok = s().Foreground(fg("#7fd88f", "#1f7a33"))
	t.bad = s().Foreground(fg("#ff7a7a", "#b01a1a"))
	t.warn = s().Foreground(fg("#ffcb6b", "#8a5a00"))
	t.added = s().Foreground(fg("#7fd88f", "#1f7a33"))
	t.removed = s().Foreground(fg("#ff7a7a", "#b01a1a"))
	t.status = s().Reverse(true)
	t.modal = s().Border(lipgloss.RoundedBorder()).BorderForeground(fg("#ffcb6b", "#8a5a00")).Padding(0, 1)
	t.chosen = s().Reverse(true).Bold(true)
	return t
}

// glamourStyle is the glamour style name for the theme. Without colours it
// stays dark or light: the program's colour profile (NO_COLOR) drops the
// colours and keeps bold and italics, where "notty" would print the ** marks.
func (t theme) glamourStyle() string {
	switch {
	case t.dark:
		return "dark"
	}
	return "light"
}
