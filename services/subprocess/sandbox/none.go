package sandbox

// NoOSSandbox is the reason every report of the none backend gives.
const NoOSSandbox = "this platform has no OS sandbox: commands run with your user's full rights (files, network, other processes)"

// noneBackend is the backend of a platform without an OS sandbox
// (Windows). It confines nothing: Wrap returns the command unchanged and
// every report has enforcement none with [NoOSSandbox] as its reason, so
// that the permission plugin, which auto-allows only commands in an
// enforced sandbox, asks before each one.
type noneBackend struct{}

var _ Backend = noneBackend{}

func (noneBackend) Name() string { return BackendNone }

// Check reports enforcement none.
func (noneBackend) Check(Policy) Report { return Unsandboxed(NoOSSandbox) }

// Wrap runs req as it is.
func (noneBackend) Wrap(req Request) (Command, Report, error) {
	return Command{Path: req.Path, Args: req.Argv, Env: req.Env}, Unsandboxed(NoOSSandbox), nil
}

// NoOS reports whether r is a report of the none backend: the platform
// has no OS sandbox and the command runs unconfined (not a sandbox that
// was turned off, nor one whose backends all failed).
func (r Report) NoOS() bool {
	return r.Backend == BackendNone && r.Enforcement == EnforcementNone && len(r.Reasons) == 1 && r.Reasons[0] == NoOSSandbox
}
