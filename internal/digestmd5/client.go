package digestmd5

import (
	"bytes"
	"fmt"
)

// Client is a client's side of a DIGEST-MD5 exchange with a ZooKeeper
// server, for tests: its first token is empty (as ZooKeeper's clients
// send), its second the digest-response to the server's challenge, and it
// checks the server's rspauth. Not safe for concurrent use.
type Client struct {
	user, password string
	cnonce         []byte
	step           int
	rspauth        []byte
}

// NewClient returns a client that authenticates as user with password,
// using cnonce as its client nonce (a client draws it at random; a fixed
// one makes the exchange reproducible).
func NewClient(user, password string, cnonce []byte) *Client {
	return &Client{user: user, password: password, cnonce: cnonce}
}

// Complete reports whether the server has proven it knows the password.
func (c *Client) Complete() bool { return c.step == 3 }

var clientKeys = []string{"realm", "nonce", "qop", "maxbuf", "charset", "algorithm", "cipher", "stale"}

// Step takes the server's last token (nil before the first) and returns
// the client's next one.
func (c *Client) Step(challenge []byte) ([]byte, error) {
	switch c.step {
	case 0:
		c.step = 1
		return []byte{}, nil
	case 1:
		d, err := parseDirectives(challenge, clientKeys, true)
		if err != nil {
			return nil, err
		}
		if len(d["nonce"]) == 0 {
			return nil, fmt.Errorf("%w: the challenge has no nonce", ErrFailed)
		}
		nonce := d["nonce"][0]
		realm := ""
		if len(d["realm"]) > 0 {
			realm = string(d["realm"][0])
		}
		uri := Protocol + "/" + ServerName
		var b bytes.Buffer
		b.WriteString(`charset=utf-8,username="`)
		quote(&b, []byte(c.user))
		b.WriteString(`",realm="`)
		quote(&b, []byte(realm))
		b.WriteString(`",nonce="`)
		quote(&b, nonce)
		b.WriteString(`",nc=00000001,cnonce="`)
		quote(&b, c.cnonce)
		b.WriteString(`",digest-uri="` + uri + `",maxbuf=65536,response=`)
		b.Write(responseValue("AUTHENTICATE", uri, c.user, realm, c.password, nonce, c.cnonce, nil))
		b.WriteString(",qop=auth")
		c.rspauth = append([]byte("rspauth="), responseValue("", uri, c.user, realm, c.password, nonce, c.cnonce, nil)...)
		c.step = 2
		return b.Bytes(), nil
	case 2:
		if !bytes.Equal(challenge, c.rspauth) {
			return nil, fmt.Errorf("%w: the server's rspauth %q does not match", ErrFailed, challenge)
		}
		c.step = 3
		return nil, nil
	}
	return nil, fmt.Errorf("%w: the exchange is over", ErrFailed)
}
