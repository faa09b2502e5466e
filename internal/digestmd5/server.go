package digestmd5

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Server is the server's side of one DIGEST-MD5 exchange, as Java's
// DigestMD5Server runs it for ZooKeeper: the first token (whatever it
// holds) is answered with a challenge, the second must be the client's
// digest-response, answered with rspauth; then the exchange is complete,
// and any further token fails. A failed step ends the exchange too. A
// Server serves one exchange of one connection; it is not safe for
// concurrent use.
type Server struct {
	password func(user string) (string, bool)
	random   io.Reader
	step     int // 1: before the challenge; 3: awaiting the response; 0: over
	nonce    []byte
	user     string
	done     bool
}

// NewServer returns the server side of an exchange. password looks up a
// user's password (false for an unknown user); random supplies the 30
// bytes of the nonce (crypto/rand.Reader outside tests).
func NewServer(password func(user string) (string, bool), random io.Reader) *Server {
	return &Server{password: password, random: random, step: 1}
}

// Complete reports whether the client has authenticated.
func (s *Server) Complete() bool { return s.done }

// User returns the name the client authenticated as, once Complete.
func (s *Server) User() string { return s.user }

// serverKeys are the directives DigestMD5Server reads from a response;
// others are ignored ("nc", the RFC's name of nonce-count, among them).
var serverKeys = []string{"username", "realm", "nonce", "cnonce", "nonce-count", "qop",
	"digest-uri", "response", "maxbuf", "charset", "cipher", "authzid", "auth-param"}

// Step takes the client's next token and returns the server's next one.
// The error wraps ErrFailed for a rejected exchange, ErrMalformed for a
// response the real server drops the connection on.
func (s *Server) Step(response []byte) ([]byte, error) {
	if len(response) > maxResponse {
		s.step = 0
		return nil, fmt.Errorf("%w: a response of %d bytes (at most %d)", ErrFailed, len(response), maxResponse)
	}
	switch s.step {
	case 1:
		// A client's initial response ("subsequent authentication") is
		// ignored: the challenge follows as for any first token.
		raw := make([]byte, 30)
		if _, err := io.ReadFull(s.random, raw); err != nil {
			return nil, fmt.Errorf("%w: nonce: %v", ErrFailed, err)
		}
		s.nonce = []byte(base64.StdEncoding.EncodeToString(raw))
		var b bytes.Buffer
		b.WriteString(`realm="`)
		quote(&b, []byte(ServerName))
		b.WriteString(`",nonce="`)
		quote(&b, s.nonce)
		b.WriteString(`",charset=utf-8,algorithm=md5-sess`)
		s.step = 3
		return b.Bytes(), nil
	case 3:
		s.step = 0
		rspauth, err := s.verify(response)
		if err != nil {
			return nil, err
		}
		s.done = true
		return rspauth, nil
	}
	return nil, fmt.Errorf("%w: the exchange is over", ErrFailed)
}

// verify checks a digest-response in DigestMD5Server.validateClientResponse's
// order and returns the rspauth token.
func (s *Server) verify(response []byte) ([]byte, error) {
	d, err := parseDirectives(response, serverKeys, false)
	if err != nil {
		return nil, err
	}
	get := func(k string) ([]byte, bool) {
		if v := d[k]; len(v) > 0 {
			return v[0], true
		}
		return nil, false
	}
	str := func(b []byte) string { return string([]rune(string(b))) } // Java's UTF-8 decoding
	if cs, ok := get("charset"); ok && str(cs) != "utf-8" {
		return nil, fmt.Errorf("%w: charset %q", ErrFailed, cs)
	}
	if mb, ok := get("maxbuf"); ok {
		if _, err := strconv.ParseInt(str(mb), 10, 32); err != nil {
			return nil, fmt.Errorf("%w: maxbuf %q", ErrMalformed, mb)
		}
	}
	userB, ok := get("username")
	if !ok {
		return nil, fmt.Errorf("%w: no username", ErrFailed)
	}
	user := str(userB)
	realmB, _ := get("realm")
	realm := str(realmB)
	if realm != ServerName {
		return nil, fmt.Errorf("%w: realm %q", ErrFailed, realm)
	}
	nonce, ok := get("nonce")
	if !ok || !bytes.Equal(nonce, s.nonce) {
		return nil, fmt.Errorf("%w: missing or mismatched nonce", ErrFailed)
	}
	cnonce, ok := get("cnonce")
	if !ok {
		return nil, fmt.Errorf("%w: no cnonce", ErrFailed)
	}
	if nc, ok := get("nonce-count"); ok {
		n, err := strconv.ParseInt(str(nc), 16, 32)
		if err != nil {
			return nil, fmt.Errorf("%w: nonce-count %q", ErrMalformed, nc)
		}
		if n != 1 {
			return nil, fmt.Errorf("%w: nonce-count %d", ErrFailed, n)
		}
	}
	if qop, ok := get("qop"); ok && str(qop) != "auth" {
		return nil, fmt.Errorf("%w: qop %q (only auth)", ErrFailed, qop)
	}
	uriB, ok := get("digest-uri")
	uri := str(uriB)
	if !ok || !strings.EqualFold(uri, Protocol+"/"+ServerName) {
		return nil, fmt.Errorf("%w: digest-uri %q", ErrFailed, uri)
	}
	got, ok := get("response")
	if !ok {
		return nil, fmt.Errorf("%w: no response", ErrFailed)
	}
	authzid, _ := get("authzid")
	password, known := s.password(user)
	if !known {
		return nil, fmt.Errorf("%w: unknown user %q", ErrFailed, user)
	}
	if !bytes.Equal(got, responseValue("AUTHENTICATE", uri, user, realm, password, s.nonce, cnonce, authzid)) {
		return nil, fmt.Errorf("%w: wrong password for %q", ErrFailed, user)
	}
	s.user = user
	return append([]byte("rspauth="), responseValue("", uri, user, realm, password, s.nonce, cnonce, authzid)...), nil
}
