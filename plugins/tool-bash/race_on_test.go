//go:build race

package toolbash

const raceEnabled = true
