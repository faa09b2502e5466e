package zkwire_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zksim/zksim/zkwire"
)

// controlStatus sends method url with Host host (the URL's when "") and the
// headers given, and returns the answer's status.
func controlStatus(t *testing.T, method, url, host string, header ...string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s (Host %s): %v", method, url, host, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestControlRefusesWebPages: what a web page can make a browser send the
// control endpoint is refused, and changes nothing: a cross-origin POST
// with Content-Type text/plain (sent without a preflight), a request with
// a foreign Host (a domain rebound to 127.0.0.1), a fetch marked by
// Sec-Fetch-Site. The address it listens on, and localhost when that is
// loopback, are answered.
func TestControlRefusesWebPages(t *testing.T) {
	srv := fastServer(t)
	c, _ := dial(t, srv.Addr(), 5*time.Second)
	base := srv.ControlURL()
	port := base[strings.LastIndex(base, ":")+1:]
	otherPort := strconv.Itoa(mustAtoi(t, port) + 1)
	expire := fmt.Sprintf("%s/sessions/%d/expire", base, c.SessionID())
	for _, tc := range []struct {
		method, url, host string
		header            []string
		want              int
	}{
		{"GET", base + "/sessions", "", nil, http.StatusOK},
		{"GET", base + "/sessions", "localhost:" + port, nil, http.StatusOK},
		{"GET", base + "/sessions", "LocalHost:" + port, nil, http.StatusOK},
		{"GET", base + "/sessions", "", []string{"Sec-Fetch-Site", "none"}, http.StatusOK}, // typed in the address bar
		{"GET", base + "/sessions", "evil.example:" + port, nil, http.StatusForbidden},
		{"GET", base + "/sessions", "evil.example", nil, http.StatusForbidden},
		{"GET", base + "/sessions", "localhost.evil.example:" + port, nil, http.StatusForbidden},
		{"GET", base + "/sessions", "127.0.0.2:" + port, nil, http.StatusForbidden},
		{"GET", base + "/sessions", "[::1]:" + port, nil, http.StatusForbidden},
		{"GET", base + "/sessions", "127.0.0.1:" + otherPort, nil, http.StatusForbidden},
		{"GET", base + "/sessions", "127.0.0.1", nil, http.StatusForbidden},
		{"GET", base + "/sessions", "", []string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{"GET", base + "/sessions", "", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"POST", expire, "", []string{"Content-Type", "text/plain", "Origin", "http://evil.example"}, http.StatusForbidden},
		{"POST", expire, "", []string{"Content-Type", "text/plain", "Origin", "null"}, http.StatusForbidden},
		{"POST", expire, "", []string{"Content-Type", "text/plain", "Origin", base}, http.StatusForbidden},
		{"POST", expire, "", []string{"Content-Type", "text/plain", "Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
		{"POST", expire, "evil.example:" + port, []string{"Content-Type", "text/plain"}, http.StatusForbidden},
	} {
		if got := controlStatus(t, tc.method, tc.url, tc.host, tc.header...); got != tc.want {
			t.Errorf("%s %s Host %q %q = %d, want %d", tc.method, tc.url, tc.host, tc.header, got, tc.want)
		}
	}
	if ids := srv.SessionIDs(); !slices.Contains(ids, c.SessionID()) {
		t.Fatalf("a refused request expired the session: live %v", ids)
	}
	// The same POST from a test client (no Origin, its own Host) works.
	if got := controlStatus(t, "POST", expire, "localhost:"+port, "Content-Type", "text/plain"); got != http.StatusOK {
		t.Fatalf("POST expire = %d", got)
	}
	if ids := srv.SessionIDs(); slices.Contains(ids, c.SessionID()) {
		t.Fatalf("expire answered 200 and the session lives: %v", ids)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// serveControlOn serves srv's control endpoint on a listener on addr too
// (srv's Close closes it) and returns the listener's port.
func serveControlOn(t *testing.T, srv *zkwire.TestServer, network, addr string) (port string, ok bool) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("listen %s: %v", addr, err)
		}
		return "", false
	}
	go srv.ServeControl(ln)
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port, true
}

// TestControlHostFromEachAddress: the Host accepted is the address the
// request arrived on: on [::1], and on a wildcard listener reached at
// 127.0.0.1 and at 127.0.0.2.
func TestControlHostFromEachAddress(t *testing.T) {
	srv := fastServer(t)
	if port, ok := serveControlOn(t, srv, "tcp6", "[::1]:0"); ok {
		url := "http://[::1]:" + port + "/sessions"
		for host, want := range map[string]int{
			"":                     http.StatusOK,
			"localhost:" + port:    http.StatusOK,
			"127.0.0.1:" + port:    http.StatusForbidden,
			"evil.example:" + port: http.StatusForbidden,
		} {
			if got := controlStatus(t, "GET", url, host); got != want {
				t.Errorf("GET %s Host %q = %d, want %d", url, host, got, want)
			}
		}
	} else {
		t.Log("no IPv6 loopback: [::1] not tried")
	}
	port, _ := serveControlOn(t, srv, "tcp4", "0.0.0.0:0")
	for _, tc := range []struct {
		at, host string
		want     int
	}{
		{"127.0.0.1", "", http.StatusOK},
		{"127.0.0.1", "localhost:" + port, http.StatusOK},
		{"127.0.0.2", "", http.StatusOK},
		{"127.0.0.2", "localhost:" + port, http.StatusOK},
		{"127.0.0.2", "127.0.0.1:" + port, http.StatusForbidden},
		{"127.0.0.1", "127.0.0.2:" + port, http.StatusForbidden},
		{"127.0.0.1", "0.0.0.0:" + port, http.StatusForbidden},
		{"127.0.0.2", "evil.example:" + port, http.StatusForbidden},
	} {
		url := "http://" + tc.at + ":" + port + "/sessions"
		if got := controlStatus(t, "GET", url, tc.host); got != tc.want {
			t.Errorf("GET %s Host %q = %d, want %d", url, tc.host, got, tc.want)
		}
	}
}

// TestControlTimeouts: a client that sends half a request, or keeps an
// idle connection, is cut off after the read-header or idle timeout
// instead of holding a goroutine of the server for as long as it likes.
func TestControlTimeouts(t *testing.T) {
	// Restored after the server's Close (cleanups run last first), once
	// its ServeControl goroutine is done with them.
	t.Cleanup(zkwire.SetControlTimeouts(200*time.Millisecond, 300*time.Millisecond))
	srv := fastServer(t)
	addr := strings.TrimPrefix(srv.ControlURL(), "http://")
	const n = 50
	conns := make([]net.Conn, n)
	for i := range conns {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		if _, err := io.WriteString(nc, "GET /sessions HTTP/1.1\r\nHost: "+addr+"\r\n"); err != nil {
			t.Fatal(err)
		}
		conns[i] = nc
	}
	start := time.Now()
	for i, nc := range conns {
		nc.SetReadDeadline(start.Add(5 * time.Second))
		_, err := io.Copy(io.Discard, nc)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("half-sent request %d still open after 5s", i)
		}
	}
	// A finished request on a kept-alive connection, then silence.
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	io.WriteString(nc, "GET /sessions HTTP/1.1\r\nHost: "+addr+"\r\n\r\n")
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /sessions = %d", resp.StatusCode)
	}
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.Copy(io.Discard, br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("an idle kept-alive connection still open after 5s")
	}
}
