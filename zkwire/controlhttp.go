package zkwire

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
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

// ControlHandler returns the HTTP control endpoint (see the package
// documentation). Served by a net/http server of the caller's (rather than
// by ServeControl), it sets no timeouts of its own.
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
func (s *Server) ControlHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sessions", func(w http.ResponseWriter, r *http.Request) {
		ids := s.zk.SessionIDs()
		out := make([]json.Number, len(ids))
		for i, id := range ids {
			out[i] = json.Number(strconv.FormatInt(id, 10))
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("POST /sessions/{id}/{action}", func(w http.ResponseWriter, r *http.Request) {
		id, err := parseSessionID(r.PathValue("id"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ctl, err := s.Control(id)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		op := r.URL.Query().Get("op")
		switch r.PathValue("action") {
		case "expire":
			ctl.Expire()
		case "disconnect":
			ctl.Disconnect()
		case "lose-next-reply":
			err = ctl.LoseNextReply(op)
		case "drop-next-request":
			err = ctl.DropNextRequest(op)
		case "pause":
			ctl.Pause()
		case "resume":
			ctl.Resume()
		case "delay":
			var d time.Duration
			if d, err = time.ParseDuration(r.URL.Query().Get("for")); err == nil && d < 0 {
				err = errors.New("negative delay")
			}
			if err == nil {
				ctl.Delay(d)
			}
		default:
			http.Error(w, "unknown action "+r.PathValue("action"), http.StatusNotFound)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return guardControl(mux)
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
