// Package deploy holds no code: it is the container image, Kubernetes and
// Strimzi manifests, systemd unit, Grafana dashboard and Prometheus alerts of
// offsetkeeper, and its tests check them without a cluster (see README.md).
package deploy
