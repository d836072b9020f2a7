// Package shell finds the commands a shell command line runs, for policy: it
// parses the line with a real shell parser (mvdan.cc/sh/v3/syntax) and lists
// every simple command with its argv, through lists, pipes, subshells,
// command substitutions, `bash -c` strings, wrappers such as sudo and env,
// and find -exec, within fixed bounds on size, nesting and work.
package shell
