package worker

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// socketDirs are the directories PostgreSQL's clients look for the
// server's unix socket in by default (Debian's and libpq's), hidden from
// every job whatever the DSN says.
var socketDirs = []string{"/run/postgresql", "/var/run/postgresql"}

// hidden is what a job's commands must not read ([RunSpec.Hide]): the
// work root (the other jobs' work dirs and the patch files; the job's own
// work dir inside it stays visible, see docs/sandbox.md) and the
// directories that hold the database's unix sockets (the default ones and
// those the DSN names), as literal denyRead entries.
func (s *Service) hidden() []string {
	out := []string{literal(filepath.Clean(s.cfg.WorkRoot))}
	for _, d := range append(slices.Clone(socketDirs), s.sockets...) {
		if l := literal(filepath.Clean(d)); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// unixSocketDirs lists the unix socket directories cfg connects through.
func unixSocketDirs(cfg *pgconn.Config) []string {
	var out []string
	if filepath.IsAbs(cfg.Host) {
		out = append(out, cfg.Host)
	}
	for _, f := range cfg.Fallbacks {
		if filepath.IsAbs(f.Host) && !slices.Contains(out, f.Host) {
			out = append(out, f.Host)
		}
	}
	return out
}

// literal escapes the glob characters of a path, so that a denyRead
// entry matches that path alone.
func literal(p string) string {
	var b strings.Builder
	for _, r := range p {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
