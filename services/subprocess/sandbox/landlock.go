package sandbox

import "errors"

// probeLandlock is completed by the Landlock backend.
func probeLandlock() (Backend, error) {
	return nil, errors.New("landlock: backend not built yet")
}
