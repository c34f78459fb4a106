package connectrest

import (
	"net"
	"net/url"
	"regexp"
	"strings"
)

// Kinds of the Strimzi resource that deploys a Connect cluster.
const (
	KindKafkaConnect      = "KafkaConnect"
	KindKafkaMirrorMaker2 = "KafkaMirrorMaker2"
)

// Strimzi names the Strimzi resource a Connect cluster was deployed by,
// as its workers or its REST address give it away.
type Strimzi struct {
	// Kind is KindKafkaConnect or KindKafkaMirrorMaker2; Name the
	// resource's metadata.name; Namespace its namespace ("" when the
	// evidence does not say).
	Kind, Name, Namespace string
	// Evidence says what gave it away, for the user.
	Evidence string
}

// strimziWorker matches the worker id Strimzi's workers advertise
// (rest.advertised.host.name=${strimzienv:ADVERTISED_HOSTNAME}, set by
// kafka_connect_run.sh to the first four labels of `hostname -f`, and
// rest.advertised.port=8083): the pod's DNS name through the headless
// service, <name>-connect-<n>.<name>-connect.<namespace>.svc:8083 (or
// -mirrormaker2-). Strimzi forbids rest.* in spec.config, so users cannot
// change it.
var strimziWorker = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)-(connect|mirrormaker2)-([0-9]+)\.([a-z0-9][-a-z0-9]*)\.([a-z0-9][-a-z0-9]*)\.svc(\.[-a-z0-9.]+)?:[0-9]+$`)

// strimziService matches the host of the REST Service Strimzi creates,
// <name>-connect-api (or <name>-mirrormaker2-api), with the namespace and
// the cluster domain or without.
var strimziService = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)-(connect|mirrormaker2)-api(\.([a-z0-9][-a-z0-9]*)(\.svc(\.[-a-z0-9.]+)?)?)?$`)

func strimziKind(component string) string {
	if component == "mirrormaker2" {
		return KindKafkaMirrorMaker2
	}
	return KindKafkaConnect
}

// StrimziWorker reports whether a worker id (a status's worker_id,
// host:port) is a Strimzi-deployed worker's, and of which resource.
func StrimziWorker(workerID string) (Strimzi, bool) {
	m := strimziWorker.FindStringSubmatch(workerID)
	if m == nil || m[5] != m[1]+"-"+m[3] {
		return Strimzi{}, false // the headless service is <name>-<component>
	}
	return Strimzi{Kind: strimziKind(m[3]), Name: m[1], Namespace: m[6], Evidence: "worker " + workerID + " is the pod of a Strimzi " + strimziKind(m[3])}, true
}

// StrimziService reports whether a REST URL names the Service Strimzi
// creates for a Connect cluster (or, with its port, one of its pods), and
// of which resource.
func StrimziService(rawURL string) (Strimzi, bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Strimzi{}, false
	}
	host := u.Hostname()
	if net.ParseIP(host) != nil {
		return Strimzi{}, false
	}
	host = strings.ToLower(host)
	if port := u.Port(); port != "" {
		if s, ok := StrimziWorker(host + ":" + port); ok {
			s.Evidence = "--connect-url " + rawURL + " is the pod of a Strimzi " + s.Kind
			return s, true
		}
	}
	m := strimziService.FindStringSubmatch(host)
	if m == nil {
		return Strimzi{}, false
	}
	return Strimzi{Kind: strimziKind(m[3]), Name: m[1], Namespace: m[5], Evidence: "--connect-url " + rawURL + " is the REST Service of a Strimzi " + strimziKind(m[3])}, true
}

// DetectStrimzi looks for a Strimzi deployment in the worker ids of
// statuses (connector and tasks) and in the REST URLs, workers first (they
// carry the namespace). It finds nothing for workers reached through
// another address (a port-forward, an Ingress) whose connectors have no
// worker id, and it cannot tell whether the operator manages the
// connectors (strimzi.io/use-connector-resources on the resource is not
// visible through the REST API).
func DetectStrimzi(urls []string, statuses []Status) (Strimzi, bool) {
	for _, st := range statuses {
		ids := []string{st.Connector.WorkerID}
		for _, t := range st.Tasks {
			ids = append(ids, t.WorkerID)
		}
		for _, id := range ids {
			if s, ok := StrimziWorker(id); ok {
				return s, true
			}
		}
	}
	for _, u := range urls {
		if s, ok := StrimziService(u); ok {
			return s, true
		}
	}
	return Strimzi{}, false
}
