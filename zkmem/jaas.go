package zkmem

import (
	"fmt"
	"strings"
)

// ParseJAAS reads a JAAS login configuration, the file a real ZooKeeper
// is given with -Djava.security.auth.login.config, and returns the SASL
// users of its section named section ("Server" is ZooKeeper's default,
// zookeeper.sasl.serverconfig): every option user_NAME="PASSWORD" of the
// section's login modules, as SaslServerCallbackHandler reads them. The
// result is for Options.SASLUsers; it is not nil, even for a section
// without users.
//
// The syntax is Java's: sections NAME { MODULE FLAG KEY=VALUE ...; ... };
// with values quoted ("...", with backslash escapes) or bare words, and
// comments // to the end of the line or /* ... */. ${property} expansion
// is not done. A missing section is an error, as it keeps a real server
// from starting.
func ParseJAAS(data []byte, section string) (map[string]string, error) {
	p := &jaasParser{src: string(data), line: 1}
	users := make(map[string]string)
	found := false
	for {
		name, err := p.token()
		if err != nil {
			return nil, err
		}
		if name.kind == jaasEOF {
			break
		}
		if name.kind != jaasWord {
			return nil, p.errorf("expected a section name, found %s", name)
		}
		if err := p.expect("{"); err != nil {
			return nil, err
		}
		if name.text == section {
			found = true
		}
		if err := p.entries(name.text == section, users); err != nil {
			return nil, err
		}
	}
	if !found {
		return nil, fmt.Errorf("jaas: no section %q", section)
	}
	return users, nil
}

// entries reads the login module entries of a section up to its closing
// "};", keeping the users of a section that is wanted.
func (p *jaasParser) entries(want bool, users map[string]string) error {
	for {
		t, err := p.token()
		if err != nil {
			return err
		}
		if t.kind == jaasPunct && t.text == "}" {
			return p.expect(";")
		}
		if t.kind != jaasWord {
			return p.errorf("expected a login module class name or '}', found %s", t)
		}
		flag, err := p.token()
		if err != nil {
			return err
		}
		switch strings.ToLower(flag.text) {
		case "required", "requisite", "sufficient", "optional":
		default:
			return p.errorf("login module %s: expected a flag (required, requisite, sufficient, optional), found %s", t.text, flag)
		}
		for {
			key, err := p.token()
			if err != nil {
				return err
			}
			if key.kind == jaasPunct && key.text == ";" {
				break
			}
			if key.kind != jaasWord {
				return p.errorf("expected an option name or ';', found %s", key)
			}
			if err := p.expect("="); err != nil {
				return err
			}
			val, err := p.token()
			if err != nil {
				return err
			}
			if val.kind != jaasWord && val.kind != jaasQuoted {
				return p.errorf("option %s: expected a value, found %s", key.text, val)
			}
			if name, ok := strings.CutPrefix(key.text, "user_"); ok && want {
				users[name] = val.text
			}
		}
	}
}

type jaasKind int

const (
	jaasEOF jaasKind = iota
	jaasWord
	jaasQuoted
	jaasPunct
)

type jaasToken struct {
	kind jaasKind
	text string
}

func (t jaasToken) String() string {
	switch t.kind {
	case jaasEOF:
		return "the end of the file"
	case jaasQuoted:
		return fmt.Sprintf("the string %q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

// jaasParser is a tokenizer over a JAAS file.
type jaasParser struct {
	src  string
	pos  int
	line int
}

func (p *jaasParser) errorf(format string, args ...any) error {
	return fmt.Errorf("jaas: line %d: %s", p.line, fmt.Sprintf(format, args...))
}

func (p *jaasParser) expect(punct string) error {
	t, err := p.token()
	if err != nil {
		return err
	}
	if t.kind != jaasPunct || t.text != punct {
		return p.errorf("expected '%s', found %s", punct, t)
	}
	return nil
}

func jaasWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("._$*-", c) >= 0 || c >= 0x80
}

// token returns the next token, skipping white space and comments.
func (p *jaasParser) token() (jaasToken, error) {
	if err := p.skip(); err != nil {
		return jaasToken{}, err
	}
	if p.pos >= len(p.src) {
		return jaasToken{kind: jaasEOF}, nil
	}
	c := p.src[p.pos]
	switch {
	case strings.IndexByte("{};=", c) >= 0:
		p.pos++
		return jaasToken{kind: jaasPunct, text: string(c)}, nil
	case c == '"':
		return p.quoted()
	case jaasWordByte(c):
		start := p.pos
		for p.pos < len(p.src) && jaasWordByte(p.src[p.pos]) {
			p.pos++
		}
		return jaasToken{kind: jaasWord, text: p.src[start:p.pos]}, nil
	}
	return jaasToken{}, p.errorf("unexpected character %q", c)
}

// skip passes white space and comments.
func (p *jaasParser) skip() error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == '\n':
			p.line++
			p.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			p.pos++
		case strings.HasPrefix(p.src[p.pos:], "//"):
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case strings.HasPrefix(p.src[p.pos:], "/*"):
			end := strings.Index(p.src[p.pos+2:], "*/")
			if end < 0 {
				return p.errorf("unterminated comment")
			}
			p.line += strings.Count(p.src[p.pos:p.pos+2+end], "\n")
			p.pos += end + 4
		default:
			return nil
		}
	}
	return nil
}

// quoted reads a quoted string: a backslash escapes the next character
// (\n, \t, \r, \b and \f name control characters).
func (p *jaasParser) quoted() (jaasToken, error) {
	p.pos++ // the opening quote
	var b strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		p.pos++
		switch c {
		case '"':
			return jaasToken{kind: jaasQuoted, text: b.String()}, nil
		case '\n':
			return jaasToken{}, p.errorf("unterminated string")
		case '\\':
			if p.pos >= len(p.src) {
				return jaasToken{}, p.errorf("unterminated string")
			}
			e := p.src[p.pos]
			p.pos++
			if r, ok := map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f'}[e]; ok {
				e = r
			}
			b.WriteByte(e)
		default:
			b.WriteByte(c)
		}
	}
	return jaasToken{}, p.errorf("unterminated string")
}
