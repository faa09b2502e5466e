package zkwire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The control endpoint's HTTP timeouts (variables so that tests can shorten
// them).
var (
	// controlReadHeaderTimeout bounds the time a client takes to send a
	// request's header: a half-sent request holds a goroutine that long.
	controlReadHeaderTimeout = 5 * time.Second
	// controlReadTimeout bounds the time to read a whole request.
	controlReadTimeout = 10 * time.Second
	// controlWriteTimeout bounds the time from the end of a request's
	// header to the end of its answer.
	controlWriteTimeout = 30 * time.Second
	// controlIdleTimeout closes a kept-alive connection left idle that long.
	controlIdleTimeout = 30 * time.Second
)

// controlMaxHeaderBytes bounds a request's header.
const controlMaxHeaderBytes = 16 << 10

// ServeControl serves the HTTP control endpoint ([Server.ControlHandler])
// on ln until Close, with timeouts: a request's header must arrive within
// 5s and the whole request within 10s, an answer must leave within 30s, and
// an idle kept-alive connection is closed after 30s. It closes ln when it
// returns, and returns ErrServerClosed after Close.
//
// The endpoint is a test tool that expires sessions and drops connections
// for whoever reaches it: give it a loopback listener unless every host
// that can reach ln is trusted.
func (s *Server) ServeControl(ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.ControlHandler(),
		ReadHeaderTimeout: controlReadHeaderTimeout,
		ReadTimeout:       controlReadTimeout,
		WriteTimeout:      controlWriteTimeout,
		IdleTimeout:       controlIdleTimeout,
		MaxHeaderBytes:    controlMaxHeaderBytes,
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.controls[hs] = struct{}{}
	s.mu.Unlock()
	err := hs.Serve(ln)
	s.mu.Lock()
	delete(s.controls, hs)
	s.mu.Unlock()
	if errors.Is(err, http.ErrServerClosed) {
		return ErrServerClosed
	}
	return err
}

// controlRoutes are the control endpoint's routes, as GET / lists them.
var controlRoutes = []struct{ method, path, does string }{
	{"GET", "/", "this list"},
	{"GET", "/sessions", "every session as JSON: id, hex, client, state, timeoutMs, armed, fired, lastOp"},
	{"GET", "/sessions/{id}", "one session as JSON"},
	{"GET", "/events?since=N&wait=10s", "the events after N as JSON (faults fired, sessions opened, resumed, closed), waiting up to wait for one"},
	{"POST", "/sessions/{id}/expire", "the server expires the session"},
	{"POST", "/sessions/{id}/disconnect", "the server drops the session's connection"},
	{"POST", "/sessions/{id}/lose-next-reply?op=NAME&path=/P&count=N", "the next N requests (with that op, on /P or under it) are applied, their reply lost, the connection closed"},
	{"POST", "/sessions/{id}/drop-next-request?op=NAME&path=/P&count=N", "the next N requests (with that op, on /P or under it) are dropped unapplied, the connection closed"},
	{"POST", "/sessions/{id}/pause", "the server stops reading the client"},
	{"POST", "/sessions/{id}/resume", "and reads it again"},
	{"POST", "/sessions/{id}/delay?for=500ms", "replies and notifications held that long from now"},
	{"POST", "/reset", "every session ends, the tree is emptied: a clean server, same address"},
	{"POST", "/restart?down=2s", "every connection drops, new ones are refused that long; same tree and sessions after"},
	{"GET", "/servers", "an ensemble's members (-servers N) as JSON: id (1 to N), role, applied zxid, pending, lagging, sessions"},
	{"POST", "/servers/{n}/lag", "member n stops applying commits: its clients read stale data, their writes and syncs wait"},
	{"POST", "/servers/{n}/catch-up", "member n applies every commit it missed, and keeps up"},
	{"POST", "/servers/{n}/crash", "member n stops: its clients move on, its port closes every connection; a leader is elected if it led"},
	{"POST", "/servers/{n}/restart", "member n starts again, catches up and serves"},
	{"POST", "/servers/{n}/isolate", "member n is cut off from the others: it serves read-only clients (-readonlymode.enabled) or none"},
	{"POST", "/servers/{n}/heal", "member n rejoins the others, drops its read-only clients and catches up"},
}

// ControlRoutes returns the control endpoint's routes, one a line, as
// GET / answers them.
func ControlRoutes() string {
	var b strings.Builder
	width := 0
	for _, r := range controlRoutes {
		width = max(width, len(r.path))
	}
	for _, r := range controlRoutes {
		fmt.Fprintf(&b, "%-4s %-*s %s\n", r.method, width, r.path, r.does)
	}
	return b.String()
}

// ControlHandler returns the HTTP control endpoint (see the package
// documentation and ControlRoutes). Served by a net/http server of the
// caller's (rather than by ServeControl), it sets no timeouts of its own.
//
// The handler refuses, with 403 Forbidden, what a web page could send it:
//   - a request whose Host is not the address it arrived on (the local
//     address of its connection, such as 127.0.0.1:PORT or [::1]:PORT,
//     and localhost:PORT when that address is loopback): a page on a
//     domain rebound to 127.0.0.1 sends its own domain;
//   - a request carrying an Origin header, or a Sec-Fetch-Site header
//     other than "none": browsers add them to the requests a page makes
//     (including the cross-origin POSTs they send without a preflight),
//     and test clients (curl, kazoo's urllib, Java's HttpClient) send
//     neither.
//
// A bad parameter is answered 400 with a message naming it; an unknown
// session 404.
func (s *Server) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, ControlRoutes())
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, fmt.Sprintf("no route %s %s: GET / lists the routes", r.Method, r.URL.Path), http.StatusNotFound)
	})
	mux.HandleFunc("GET /sessions", func(w http.ResponseWriter, r *http.Request) {
		if !onlyParams(w, r) {
			return
		}
		writeJSON(w, s.Sessions())
	})
	mux.HandleFunc("GET /sessions/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, ok := sessionParam(w, r)
		if !ok || !onlyParams(w, r) {
			return
		}
		for _, st := range s.Sessions() {
			if st.ID == id {
				writeJSON(w, st)
				return
			}
		}
		http.Error(w, fmt.Sprintf("%v: 0x%x", ErrUnknownSession, id), http.StatusNotFound)
	})
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		s.controlEvents(w, r)
	})
	mux.HandleFunc("POST /sessions/{id}/{action}", func(w http.ResponseWriter, r *http.Request) {
		s.controlAction(w, r)
	})
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, r *http.Request) {
		if onlyParams(w, r) {
			s.Reset()
			fmt.Fprintln(w, "ok")
		}
	})
	s.memberRoutes(mux)
	mux.HandleFunc("POST /restart", func(w http.ResponseWriter, r *http.Request) {
		if !onlyParams(w, r, "down") {
			return
		}
		var down time.Duration
		if r.URL.Query().Has("down") {
			var ok bool
			if down, ok = durationParam(w, r, "down"); !ok {
				return
			}
		}
		s.Restart(down)
		fmt.Fprintln(w, "ok")
	})
	return guardControl(mux)
}

// maxEventsWait bounds GET /events' wait, under the write timeout.
const maxEventsWait = 25 * time.Second

// controlEvents runs GET /events?since=N&wait=D.
func (s *Server) controlEvents(w http.ResponseWriter, r *http.Request) {
	if !onlyParams(w, r, "since", "wait") {
		return
	}
	q := r.URL.Query()
	var since int64
	if q.Has("since") {
		var err error
		if since, err = strconv.ParseInt(q.Get("since"), 10, 64); err != nil || since < 0 {
			http.Error(w, fmt.Sprintf("parameter since: %q is not an event number (0, or the seq of an event)", q.Get("since")), http.StatusBadRequest)
			return
		}
	}
	var wait time.Duration
	if q.Has("wait") {
		var ok bool
		if wait, ok = durationParam(w, r, "wait"); !ok {
			return
		}
		if wait > maxEventsWait {
			http.Error(w, fmt.Sprintf("parameter wait: %v is over %v: wait again instead", wait, maxEventsWait), http.StatusBadRequest)
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	evs, _ := s.Events(ctx, since)
	if evs == nil {
		evs = []Event{}
	}
	writeJSON(w, evs)
}

// controlAction runs POST /sessions/{id}/{action}.
func (s *Server) controlAction(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	params, known := map[string][]string{
		"expire": nil, "disconnect": nil, "pause": nil, "resume": nil,
		"lose-next-reply": {"op", "path", "count"}, "drop-next-request": {"op", "path", "count"}, "delay": {"for"},
	}[action]
	if !known {
		http.Error(w, fmt.Sprintf("unknown action %q: GET / lists the routes", action), http.StatusNotFound)
		return
	}
	id, ok := sessionParam(w, r)
	if !ok || !onlyParams(w, r, params...) {
		return
	}
	ctl, err := s.Control(id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	var aim Aim
	if action == "lose-next-reply" || action == "drop-next-request" {
		if aim, ok = aimParams(w, r); !ok {
			return
		}
	}
	switch action {
	case "expire":
		ctl.Expire()
	case "disconnect":
		ctl.Disconnect()
	case "lose-next-reply":
		err = ctl.LoseReplies(aim)
	case "drop-next-request":
		err = ctl.DropRequests(aim)
	case "pause":
		ctl.Pause()
	case "resume":
		ctl.Resume()
	case "delay":
		if !r.URL.Query().Has("for") {
			http.Error(w, "parameter for is required: how long to hold replies, a duration such as 500ms", http.StatusBadRequest)
			return
		}
		d, ok := durationParam(w, r, "for")
		if !ok {
			return
		}
		ctl.Delay(d)
	}
	if err != nil { // aimParams checked what Arm checks
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprintln(w, "ok")
}

// aimParams parses the op, path and count parameters of lose-next-reply
// and drop-next-request; on error it answers 400 naming the parameter.
func aimParams(w http.ResponseWriter, r *http.Request) (Aim, bool) {
	q := r.URL.Query()
	aim := Aim{Op: q.Get("op"), Path: q.Get("path"), Count: 1}
	if _, err := opByName(aim.Op); err != nil {
		http.Error(w, fmt.Sprintf("parameter op: unknown op name %q (ZooKeeper's: create, getData, multi...; none for any request)", aim.Op), http.StatusBadRequest)
		return aim, false
	}
	if q.Has("path") && !strings.HasPrefix(aim.Path, "/") {
		http.Error(w, fmt.Sprintf("parameter path: %q is not a path: /app/lock aims at it and the nodes under it, /app/lock/ at the nodes under it", aim.Path), http.StatusBadRequest)
		return aim, false
	}
	if q.Has("count") {
		n, err := strconv.Atoi(q.Get("count"))
		if err != nil || n < 1 {
			http.Error(w, fmt.Sprintf("parameter count: %q is not a count of requests (1, 2, 3...)", q.Get("count")), http.StatusBadRequest)
			return aim, false
		}
		aim.Count = n
	}
	return aim, true
}

// onlyParams answers 400 and reports false if r has a query parameter not
// in allowed, or one given twice.
func onlyParams(w http.ResponseWriter, r *http.Request, allowed ...string) bool {
	for name, vals := range r.URL.Query() {
		if !slices.Contains(allowed, name) {
			what := "no parameters"
			if len(allowed) > 0 {
				what = "only " + strings.Join(allowed, ", ")
			}
			http.Error(w, fmt.Sprintf("unknown parameter %s: %s %s takes %s", name, r.Method, r.URL.Path, what), http.StatusBadRequest)
			return false
		}
		if len(vals) > 1 {
			http.Error(w, fmt.Sprintf("parameter %s given %d times", name, len(vals)), http.StatusBadRequest)
			return false
		}
	}
	return true
}

// durationParam parses the query parameter name as a duration that is not
// negative; on error it answers 400 naming the parameter.
func durationParam(w http.ResponseWriter, r *http.Request, name string) (time.Duration, bool) {
	v := r.URL.Query().Get(name)
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		http.Error(w, fmt.Sprintf("parameter %s: %q is not a duration such as 500ms or 2s", name, v), http.StatusBadRequest)
		return 0, false
	case d < 0:
		http.Error(w, fmt.Sprintf("parameter %s: %v is negative", name, d), http.StatusBadRequest)
		return 0, false
	}
	return d, true
}

// sessionParam parses the path's session id; on error it answers 400.
func sessionParam(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := parseSessionID(r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return 0, false
	}
	return id, true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// guardControl refuses what a web page could send the control endpoint
// (see ControlHandler) and passes the rest to h.
func guardControl(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); r.Header["Origin"] != nil {
			http.Error(w, fmt.Sprintf("zkwire control: refused a request with Origin %q: the control endpoint does not answer web pages", o), http.StatusForbidden)
			return
		}
		if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "none" {
			http.Error(w, fmt.Sprintf("zkwire control: refused a request with Sec-Fetch-Site %q: the control endpoint does not answer web pages", site), http.StatusForbidden)
			return
		}
		if want, ok := hostAllowed(r); !ok {
			http.Error(w, fmt.Sprintf("zkwire control: refused Host %q: this endpoint answers only to %s", r.Host, want), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// hostAllowed reports whether r's Host names the address r arrived on;
// want describes the Host values accepted.
func hostAllowed(r *http.Request) (want string, ok bool) {
	la, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if la == nil {
		return "the address it listens on", false
	}
	local, err := netip.ParseAddrPort(la.String())
	if err != nil {
		return la.String(), false
	}
	ip := local.Addr().Unmap().WithZone("")
	port := strconv.Itoa(int(local.Port()))
	want = netip.AddrPortFrom(ip, local.Port()).String()
	if ip.IsLoopback() {
		want += " or localhost:" + port
	}
	host, hport, err := net.SplitHostPort(r.Host)
	if err != nil {
		// No port: HTTP's default, 80.
		host, hport = strings.TrimSuffix(strings.TrimPrefix(r.Host, "["), "]"), "80"
	}
	if hport != port {
		return want, false
	}
	if strings.EqualFold(host, "localhost") {
		return want, ip.IsLoopback()
	}
	hip, err := netip.ParseAddr(host)
	if err != nil {
		return want, false
	}
	return want, hip.Unmap().WithZone("") == ip
}
