package main

import (
	"embed"
	"fmt"
	"io"
	"slices"
	"strings"
)

// helpFiles are the texts of "converse help TOPIC", one file per topic:
// the one place the manifest format, the -json object, recordings and the
// exit status are described, for the binary and the package doc alike.
//
//go:embed help/*.txt
var helpFiles embed.FS

// helpTopics are the topics of "converse help", in the order listed.
var helpTopics = []string{"manifest", "mcp", "json", "recording", "view", "exit"}

// helpText returns the text of a topic.
func helpText(topic string) string {
	b, err := helpFiles.ReadFile("help/" + topic + ".txt")
	if err != nil {
		return "" // no such topic; helpTopics and the files are tested to match
	}
	return string(b)
}

// isHelp reports whether args, the whole command line, ask for help:
// "converse help" or "converse help TOPIC". A longer command line starting
// with "help" is a prompt.
func isHelp(args []string) bool {
	return len(args) > 0 && len(args) <= 2 && args[0] == "help"
}

// printHelp prints the topic of "converse help TOPIC", or the list of
// topics for "converse help". An unknown topic is a usage error.
func printHelp(w io.Writer, args []string) error {
	if len(args) == 1 {
		fmt.Fprintf(w, "usage: converse help TOPIC, where TOPIC is one of: %s\n", strings.Join(helpTopics, ", "))
		return nil
	}
	if !slices.Contains(helpTopics, args[1]) {
		return usagef("help %s: no such topic; the topics are %s (a prompt of one or two words starting with \"help\" goes after --: converse -- help %s)",
			args[1], strings.Join(helpTopics, ", "), args[1])
	}
	_, err := io.WriteString(w, helpText(args[1]))
	return err
}
