package web

import (
	"errors"
	"net/http"
	"regexp"
	"sync"

	"github.com/dshgo/harness/services/settings"
)

// UseSettings serves svc on the settings page (GET /api/settings, PATCH
// /api/settings/{id}). The host that holds the loader creates the service
// (`harness serve` does); without one the page says settings are not
// available.
func (s *Server) UseSettings(svc *settings.Service) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settings = svc
}

func (s *Server) settingsService() *settings.Service {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// Compiled on first use: package init runs at every harness start.
var rowIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`) })

func (s *Server) settingsRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/settings", s.getSettings)
	mux.HandleFunc("PATCH /api/settings/{id}", s.patchSettings)
}

func (s *Server) getSettings(w http.ResponseWriter, r *http.Request) {
	svc := s.settingsService()
	if svc == nil {
		httpError(w, http.StatusNotFound, "settings are not available in this server")
		return
	}
	snap, err := svc.Get()
	if err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, snap)
}

// patchSettings changes one row: {revision, values}. 409 when the revision
// is stale, 422 with field errors when the values do not validate.
func (s *Server) patchSettings(w http.ResponseWriter, r *http.Request) {
	svc := s.settingsService()
	if svc == nil {
		httpError(w, http.StatusNotFound, "settings are not available in this server")
		return
	}
	id := r.PathValue("id")
	if !rowIDRE().MatchString(id) {
		httpError(w, http.StatusBadRequest, "row id %q is malformed", id)
		return
	}
	var body struct {
		Revision string         `json:"revision"`
		Values   map[string]any `json:"values"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	res, err := svc.Update(r.Context(), id, body.Revision, body.Values)
	var fe *settings.FieldErrors
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, res)
	case errors.Is(err, settings.ErrConflict):
		httpError(w, http.StatusConflict, "%v", err)
	case errors.Is(err, settings.ErrNotFound):
		httpError(w, http.StatusNotFound, "%v", err)
	case errors.As(err, &fe):
		writeJSON(w, http.StatusUnprocessableEntity, apiError{Error: fe.Error(), Fields: fe.Fields})
	default:
		httpError(w, http.StatusInternalServerError, "%v", err)
	}
}
