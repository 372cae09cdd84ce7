package sandbox

// platformProbes are Linux's backends in probe order: bwrap (full
// enforcement), then Landlock (partial).
func platformProbes() []probe {
	return []probe{{BackendBwrap, probeBwrap}, {BackendLandlock, probeLandlock}}
}

// unavailableHint is how to get a backend on Linux, for UnavailableError.
const unavailableHint = "Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) or enable Landlock in the kernel"

// fixHint is FixHint on Linux.
const fixHint = "install bubblewrap"
