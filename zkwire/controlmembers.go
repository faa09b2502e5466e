package zkwire

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
)

// memberRoutes adds the ensemble's routes, GET /servers and POST
// /servers/{n}/{action}, to mux. Members are numbered from 1, as
// ZooKeeper's myid. On a standalone server (New) both answer 404 saying
// so; a member number that is not one answers 400, one out of range 404.
func (s *Server) memberRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /servers", func(w http.ResponseWriter, r *http.Request) {
		if !onlyParams(w, r) || !s.ensembleOnly(w) {
			return
		}
		writeJSON(w, s.Members())
	})
	mux.HandleFunc("POST /servers/{n}/{action}", func(w http.ResponseWriter, r *http.Request) {
		action := MemberAction(r.PathValue("action"))
		if !slices.Contains(MemberActions, action) {
			http.Error(w, fmt.Sprintf("unknown member control %q (lag, catch-up, crash, restart, isolate, heal): GET / lists the routes", action), http.StatusNotFound)
			return
		}
		if !onlyParams(w, r) || !s.ensembleOnly(w) {
			return
		}
		v := r.PathValue("n")
		n, err := strconv.Atoi(v)
		if err != nil {
			http.Error(w, fmt.Sprintf("member %q: not a member number (1 to %d)", v, s.ens.Size()), http.StatusBadRequest)
			return
		}
		if n < 1 || n > s.ens.Size() {
			http.Error(w, fmt.Sprintf("no member %d: the members are 1 to %d", n, s.ens.Size()), http.StatusNotFound)
			return
		}
		if err := s.ControlMember(n-1, action); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "ok")
	})
}

// ensembleOnly answers 404 and reports false on a server without members.
func (s *Server) ensembleOnly(w http.ResponseWriter) bool {
	if s.ens == nil {
		http.Error(w, "a standalone server has no members: the /servers routes need an ensemble (zksim serve -servers N)", http.StatusNotFound)
		return false
	}
	return true
}
