package worktrees

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"regexp"
	"strings"
)

// BranchPrefix is the prefix of every branch the manager makes:
// harness/NAME.
const BranchPrefix = "harness/"

// maxName is the longest worktree name.
const maxName = 64

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidateName reports why name cannot name a worktree (and its branch
// harness/NAME): it must be 1 to 64 letters, digits, '.', '_' or '-',
// start with a letter or digit, hold no "..", and not end in ".lock" or
// ".json".
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("worktree name: empty")
	case len(name) > maxName:
		return fmt.Errorf("worktree name %q: longer than %d characters", name, maxName)
	case !nameRE.MatchString(name):
		return fmt.Errorf("worktree name %q: use letters, digits, '.', '_' and '-', starting with a letter or digit", name)
	case strings.Contains(name, ".."), strings.HasSuffix(name, ".lock"), strings.HasSuffix(name, ".json"):
		return fmt.Errorf("worktree name %q: must not contain \"..\" or end in .lock or .json", name)
	}
	return nil
}

var (
	adjectives = [...]string{"amber", "brave", "calm", "deft", "eager", "fleet", "gentle", "hardy",
		"keen", "lucid", "mellow", "nimble", "plucky", "quiet", "rapid", "steady", "tidy", "vivid", "witty", "zesty"}
	nouns = [...]string{"badger", "crane", "dingo", "egret", "falcon", "gecko", "heron", "ibis",
		"jackal", "koala", "lemur", "marten", "newt", "otter", "panda", "quokka", "raven", "stoat", "tapir", "wombat"}
)

// generateName returns a readable name (adjective-noun, after the first
// tries adjective-noun-N) that taken does not report as taken.
func generateName(taken func(string) bool) (string, error) {
	for try := 0; try < 64; try++ {
		n := pick(adjectives[:]) + "-" + pick(nouns[:])
		if try >= 16 {
			n += fmt.Sprintf("-%d", try)
		}
		if !taken(n) {
			return n, nil
		}
	}
	return "", fmt.Errorf("worktree name: no free generated name after 64 tries; give one")
}

func pick(words []string) string {
	i, err := rand.Int(rand.Reader, big.NewInt(int64(len(words))))
	if err != nil {
		return words[0]
	}
	return words[i.Int64()]
}
