package zksim

import (
	"fmt"
	"unicode/utf8"
)

// ValidatePath reports whether path is a valid znode path, with the rules of
// ZooKeeper's PathUtils.validatePath. For a sequential create the server
// validates path+"1", so a trailing "/" is then allowed ("/queue/" creates
// "/queue/0000000000"). The error wraps ErrBadArguments and says why.
func ValidatePath(path string, sequential bool) error {
	if sequential {
		path += "1"
	}
	if reason := pathProblem(path); reason != "" {
		return fmt.Errorf("%w: invalid path %q: %s", ErrBadArguments, path, reason)
	}
	return nil
}

func pathProblem(path string) string {
	if path == "" {
		return "path must not be empty"
	}
	if path[0] != '/' {
		return "path must start with /"
	}
	if len(path) == 1 {
		return ""
	}
	if path[len(path)-1] == '/' {
		return "path must not end with /"
	}
	// Components: none empty, none "." or "..".
	start := 1
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		switch path[start:i] {
		case "":
			return "empty node name"
		case ".", "..":
			return "relative paths not allowed"
		}
		start = i + 1
	}
	for i, r := range path {
		if r >= 0x20 && r < 0x7f {
			continue
		}
		switch {
		case r == 0:
			return fmt.Sprintf("null character not allowed @%d", i)
		case r == utf8.RuneError:
			return fmt.Sprintf("invalid character @%d", i)
		case invalidPathRune(r):
			return fmt.Sprintf("invalid character %U @%d", r, i)
		}
	}
	return ""
}

// invalidPathRune mirrors the character ranges PathUtils rejects. Java sees
// UTF-16, so every rune beyond U+FFFF arrives as a surrogate pair and is
// rejected with the U+D800-U+F8FF range.
func invalidPathRune(r rune) bool {
	return (r > 0 && r <= 0x1f) ||
		(r >= 0x7f && r <= 0x9f) ||
		(r >= 0xd800 && r <= 0xf8ff) ||
		(r >= 0xfff0 && r <= 0xffff) ||
		r > 0xffff
}
