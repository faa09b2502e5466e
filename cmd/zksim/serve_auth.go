package main

import (
	"encoding/base64"
	"flag"
	"fmt"
	"maps"
	"os"
	"strings"

	"github.com/zksim/zksim/zkmem"
)

// authFlags are the flags of "zksim serve" that configure authentication:
// SASL DIGEST-MD5 users (from a JAAS file, as a real server reads them,
// and one by one) and the superDigest.
type authFlags struct {
	jaas        string
	users       saslUsers
	superDigest string
}

// registerAuthFlags adds the authentication flags to fs.
func registerAuthFlags(fs *flag.FlagSet) *authFlags {
	a := &authFlags{}
	fs.StringVar(&a.jaas, "jaas", "", "JAAS login configuration `file`, as a real server's java.security.auth.login.config: "+
		"the user_NAME=\"PASSWORD\" entries of its Server section are the SASL DIGEST-MD5 users (identity sasl:NAME)")
	fs.Var(&a.users, "saslUser", "a SASL DIGEST-MD5 user, `NAME:PASSWORD` (repeatable; added to those of -jaas)")
	fs.StringVar(&a.superDigest, "superDigest", "", "zookeeper.DigestAuthenticationProvider.superDigest, `super:BASE64` of the SHA-1 of "+
		"super:PASSWORD: addAuth digest super:PASSWORD then passes every ACL check")
	return a
}

// options returns Options.SASLUsers (nil when neither -jaas nor -saslUser
// is given: no SASL) and Options.SuperDigest, or an error naming the flag.
func (a *authFlags) options() (map[string]string, string, error) {
	var users map[string]string
	if a.jaas != "" {
		data, err := os.ReadFile(a.jaas)
		if err != nil {
			return nil, "", fmt.Errorf("-jaas: %w", err)
		}
		if users, err = zkmem.ParseJAAS(data, "Server"); err != nil {
			return nil, "", fmt.Errorf("-jaas %s: %w", a.jaas, err)
		}
	}
	if a.users != nil {
		if users == nil {
			users = make(map[string]string)
		}
		maps.Copy(users, a.users)
	}
	if d := a.superDigest; d != "" {
		name, sum, ok := strings.Cut(d, ":")
		raw, err := base64.StdEncoding.DecodeString(sum)
		if !ok || name == "" || err != nil || len(raw) != 20 {
			return nil, "", fmt.Errorf("-superDigest %q: want NAME:BASE64, the base64 of a SHA-1 (as zksim.DigestID(\"super\", PASSWORD) prints it)", d)
		}
	}
	return users, a.superDigest, nil
}

// saslUsers is the value of the repeatable -saslUser flag.
type saslUsers map[string]string

func (u *saslUsers) String() string {
	if u == nil || *u == nil {
		return ""
	}
	names := make([]string, 0, len(*u))
	for name := range *u {
		names = append(names, name)
	}
	return strings.Join(names, ",")
}

func (u *saslUsers) Set(s string) error {
	name, password, ok := strings.Cut(s, ":")
	if !ok || name == "" {
		return fmt.Errorf("want NAME:PASSWORD, got %q", s)
	}
	if *u == nil {
		*u = make(saslUsers)
	}
	(*u)[name] = password
	return nil
}
