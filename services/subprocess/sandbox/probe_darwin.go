package sandbox

// platformProbes are macOS's backends: Seatbelt (sandbox-exec).
func platformProbes() []probe {
	return []probe{{BackendSeatbelt, probeSeatbelt}}
}

// unavailableHint is how to get a backend on macOS, for UnavailableError.
const unavailableHint = "sandbox-exec is part of macOS (/usr/bin/sandbox-exec): run the harness where it exists and outside another sandbox (sandbox-exec cannot apply a profile inside one)"

// fixHint is FixHint on macOS.
const fixHint = "run the harness where /usr/bin/sandbox-exec works (outside another sandbox)"
