package web

import "net/http"

func (s *Server) settingsRoutes(mux *http.ServeMux) {}
