package mcptools

import (
	"slices"
	"strconv"
	"strings"
)

const maxName = 64 // Bedrock's limit on a tool's name

// cleanName keeps the characters Bedrock allows in a tool name and replaces
// every other character with "_", then cuts the name to 64 bytes.
func cleanName(name string) string {
	clean := strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)
	return clean[:min(len(clean), maxName)]
}

// pickName names a server's tool server__tool, cleaned, or with a suffix _2,
// _3, ... if that is taken. It reports whether it had to add a suffix, and
// false if it found no name.
func pickName(server, tool string, taken func(string) bool) (name string, renamed, ok bool) {
	base := cleanName(server + "__" + tool)
	if !taken(base) {
		return base, false, true
	}
	for i := 2; i < 1000; i++ {
		suffix := "_" + strconv.Itoa(i)
		if name := base[:min(len(base), maxName-len(suffix))] + suffix; !taken(name) {
			return name, true, true
		}
	}
	return "", false, false
}

// wants reports whether the server's tool passes its Include and Exclude
// lists.
func (s Server) wants(tool string) bool {
	return (len(s.Include) == 0 || slices.Contains(s.Include, tool)) && !slices.Contains(s.Exclude, tool)
}
