package llm

// KeyChecker is implemented by adapters that know, before any request,
// that their route cannot authenticate (llm-openai: no API key in its
// config nor in the environment variable it names).
type KeyChecker interface {
	// KeyError returns the error every request would fail with for want
	// of a key (it names where the key is read from), or nil.
	KeyError() error
}

// KeyError resolves route ("" = the default route) and returns its
// adapter's [KeyChecker.KeyError]: nil when the key is there or the
// adapter does not say. A route that does not resolve returns its
// resolution error (wrapping ErrNoAdapter).
func (s *Service) KeyError(route string) error {
	_, a, err := s.resolve(route)
	if err != nil {
		return err
	}
	if kc, ok := a.(KeyChecker); ok {
		return kc.KeyError()
	}
	return nil
}
