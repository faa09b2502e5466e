package zkserver

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// writeJAAS writes a JAAS login configuration under dir whose Server
// section lists users for DIGEST-MD5, and returns the system properties
// that make the server use it and the SASL authentication provider.
func writeJAAS(dir string, users map[string]string) ([]string, error) {
	var b strings.Builder
	b.WriteString("Server {\n    org.apache.zookeeper.server.auth.DigestLoginModule required")
	names := make([]string, 0, len(users))
	for name := range users {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if name == "" || strings.IndexFunc(name, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._$*-", r))
		}) >= 0 {
			return nil, fmt.Errorf("zkserver: SASL user name %q: a JAAS option name holds only letters, digits and ._$*-", name)
		}
		fmt.Fprintf(&b, "\n    user_%s=\"%s\"", name, jaasQuote(users[name]))
	}
	b.WriteString(";\n};\n")
	path := filepath.Join(dir, "jaas.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return nil, err
	}
	return []string{
		"-Djava.security.auth.login.config=" + path,
		"-Dzookeeper.authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
	}, nil
}

// jaasQuote escapes s for a quoted JAAS value (Java's StreamTokenizer
// reads these escapes).
func jaasQuote(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
}
