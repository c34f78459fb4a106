package capture

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// policyMark is in every warning offsetsPolicyWarnings makes, and only in
// them (IsPolicyWarning).
const policyMark = " has cleanup.policy="

// IsPolicyWarning reports whether w, one of a snapshot's Warnings, names
// an offsets topic whose cleanup.policy is not exactly compact.
func IsPolicyWarning(w string) bool { return strings.Contains(w, policyMark) }

// PolicyFix is the command that sets topic's cleanup.policy to compact,
// with bootstrap as its --bootstrap-server. It is the last thing in the
// warning about topic.
func PolicyFix(bootstrap, topic string) string {
	return fmt.Sprintf("kafka-configs.sh --bootstrap-server %s --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact", bootstrap, topic)
}

// offsetsPolicyWarnings warns of each offsets topic whose cleanup.policy
// is not exactly compact. Connect creates its offsets topic compacted and
// checks the policy only when a worker starts
// (TopicAdmin.verifyTopicCleanupPolicyOnlyCompact): a policy changed to
// delete (or compact,delete) afterwards goes unseen while the workers run,
// and Kafka deletes the topic's records older than retention.ms, a
// connector's only offset among them when it commits less often than that.
// The next worker to start refuses the topic. A snapshot still holds what
// is left; the warning says what goes and the command that stops it.
// Configs that cannot be described (an ACL) give no warning, as Connect
// logs and goes on.
func offsetsPolicyWarnings(ctx context.Context, cl *kgo.Client, adm *kadm.Client, topics []string) []string {
	if len(topics) == 0 {
		return nil
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topics...)
	if err != nil {
		return nil
	}
	bootstrap := "<brokers>"
	if seeds, _ := cl.OptValue(kgo.SeedBrokers).([]string); len(seeds) > 0 {
		bootstrap = strings.Join(seeds, ",")
	}
	var out []string
	for _, rc := range rcs {
		if rc.Err != nil {
			continue
		}
		var policy, retention string
		for _, c := range rc.Configs {
			switch c.Key {
			case "cleanup.policy":
				policy = c.MaybeValue()
			case "retention.ms":
				retention = c.MaybeValue()
			}
		}
		if policy == "" || OnlyCompact(policy) {
			continue
		}
		keeps := "Kafka deletes its records as retention.ms says"
		if ms, err := strconv.ParseInt(retention, 10, 64); err == nil {
			switch {
			case ms < 0:
				keeps = "retention.ms is -1, so Kafka deletes nothing by age yet, but retention.bytes may"
			default:
				keeps = fmt.Sprintf("Kafka deletes its records older than retention.ms=%d (%s)", ms, time.Duration(ms)*time.Millisecond)
			}
		}
		out = append(out, fmt.Sprintf("offsets topic %q%s%s: %s, and with them the offset of every connector that has not committed since; "+
			"a Connect worker refuses to start on it (the policy must be exactly compact). "+
			"Keep the snapshots taken before it changed: they hold the offsets it deletes. Set it back with: %s",
			rc.Name, policyMark, policy, keeps, PolicyFix(bootstrap, rc.Name)))
	}
	return out
}

// OnlyCompact reports whether a cleanup.policy (a list, as Kafka returns
// it) is exactly {compact}, the only policy a Connect worker accepts on
// its offsets topic.
func OnlyCompact(policy string) bool {
	seen := false
	for _, part := range strings.Split(strings.Trim(policy, "[]"), ",") {
		switch strings.TrimSpace(part) {
		case "compact":
			seen = true
		case "":
		default:
			return false
		}
	}
	return seen
}
