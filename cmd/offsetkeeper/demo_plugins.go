package main

import (
	"slices"
	"strings"

	"github.com/offsetkeeper/offsetkeeper/internal/connectdemo"
	"github.com/offsetkeeper/offsetkeeper/internal/connectsim"
)

// demoConnectVersion is the Kafka version the demo's Connect REST API
// reports (connectsim's default).
const demoConnectVersion = "3.7.0"

// demoPlugins are the connector plugins the demo's Connect workers list:
// the stock ones, and the class of every connector the demo seeds, as a
// worker that runs a connector has its plugin installed. Without them the
// undo of a deleted connector (restore --create-connectors), which the
// daemon and events print, was refused in the demo for every connector but
// the FileStream and MirrorMaker 2 ones: "plugin ... is not installed".
func demoPlugins(exp *connectdemo.Expected) []connectsim.Plugin {
	out := connectsim.DefaultPlugins(demoConnectVersion)
	for _, c := range exp.Connectors {
		if !c.HasConfig || c.Class == "" || (c.Type != connectdemo.TypeSource && c.Type != connectdemo.TypeSink) {
			continue
		}
		if slices.ContainsFunc(out, func(p connectsim.Plugin) bool { return p.Class == c.Class }) {
			continue
		}
		out = append(out, connectsim.Plugin{Class: c.Class, Type: c.Type, Version: "1.0.0"})
	}
	slices.SortFunc(out, func(a, b connectsim.Plugin) int { return strings.Compare(a.Class, b.Class) })
	return out
}
