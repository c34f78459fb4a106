package kafkaconf

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestFromWorkerProperties(t *testing.T) {
	dir := t.TempDir()
	secretsFile := writeFile(t, dir, "secrets.properties", []byte("kafka.password=from-file\n"))
	if err := os.Mkdir(filepath.Join(dir, "user"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "user"), "password", []byte("from-dir\n"))
	t.Setenv("OK_TEST_KAFKA_PASSWORD", "from-env")
	const scramJAAS = `org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="p\"w";`

	tests := []struct {
		name   string
		props  string
		config Config
		worker Worker
	}{
		{"plaintext", `
bootstrap.servers = kafka-0:9092, kafka-1:9092 ,,PLAINTEXT://kafka-2:9092
group.id=connect-cluster  
offset.storage.topic=connect-offsets
config.storage.topic=connect-configs
status.storage.topic=connect-status
producer.security.protocol=SASL_SSL
consumer.sasl.mechanism=PLAIN
`, Config{Brokers: []string{"kafka-0:9092", "kafka-1:9092", "kafka-2:9092"}},
			Worker{OffsetsTopic: "connect-offsets", ConfigTopic: "connect-configs", StatusTopic: "connect-status", GroupID: "connect-cluster"}},
		{"SASL_SSL SCRAM", `
bootstrap.servers=kafka:9093
security.protocol=sasl_ssl
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
  username="connect" \
  password="p\\"w";
ssl.truststore.type=PEM
ssl.truststore.location=/etc/kafka/ca.pem
ssl.keystore.type=PEM
ssl.keystore.location=/etc/kafka/keystore.pem
`, Config{Brokers: []string{"kafka:9093"},
			TLS:  TLS{Enabled: true, CAFile: "/etc/kafka/ca.pem", CertFile: "/etc/kafka/keystore.pem", KeyFile: "/etc/kafka/keystore.pem"},
			SASL: SASL{Mechanism: MechanismScramSHA512, Username: "connect", Password: `p"w`}}, Worker{}},
		{"SASL_PLAINTEXT PLAIN ignores ssl settings", `
bootstrap.servers=kafka:9092
security.protocol=SASL_PLAINTEXT
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=u password=p;
ssl.truststore.location=/truststore.jks
`, Config{Brokers: []string{"kafka:9092"}, SASL: SASL{Mechanism: MechanismPlain, Username: "u", Password: "p"}}, Worker{}},
		{"SSL without hostname verification, system roots", `
bootstrap.servers=kafka:9093
security.protocol=SSL
ssl.endpoint.identification.algorithm=
`, Config{Brokers: []string{"kafka:9093"}, TLS: TLS{Enabled: true, SkipHostnameVerification: true}}, Worker{}},
		{"SSL with https verification", `
bootstrap.servers=kafka:9093
security.protocol=SSL
ssl.endpoint.identification.algorithm=HTTPS
`, Config{Brokers: []string{"kafka:9093"}, TLS: TLS{Enabled: true}}, Worker{}},
		{"admin. prefixed fallback, top level wins", `
admin.bootstrap.servers=admin-kafka:9093
admin.security.protocol=SASL_SSL
admin.sasl.mechanism=SCRAM-SHA-256
admin.sasl.jaas.config=` + strings.ReplaceAll(scramJAAS, `\"`, `\\"`) + `
group.id=top
admin.group.id=admin
`, Config{Brokers: []string{"admin-kafka:9093"}, TLS: TLS{Enabled: true},
			SASL: SASL{Mechanism: MechanismScramSHA256, Username: "connect", Password: `p"w`}}, Worker{GroupID: "top"}},
		{"SCRAM delegation token", `
bootstrap.servers=kafka:9092
security.protocol=SASL_PLAINTEXT
sasl.mechanism=SCRAM-SHA-256
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="tokenid" password="hmac" tokenauth="true";
`, Config{Brokers: []string{"kafka:9092"}, SASL: SASL{Mechanism: MechanismScramSHA256, Username: "tokenid", Password: "hmac", ScramToken: true}}, Worker{}},
		{"OAUTHBEARER takes no credentials from JAAS", `
bootstrap.servers=kafka:9092
security.protocol=SASL_SSL
sasl.mechanism=OAUTHBEARER
sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="c" clientSecret="s";
`, Config{Brokers: []string{"kafka:9092"}, TLS: TLS{Enabled: true}, SASL: SASL{Mechanism: MechanismOAuthBearer}}, Worker{}},
		{"config providers", `
config.providers=file,dir,env
config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
bootstrap.servers=kafka:9092
security.protocol=SASL_PLAINTEXT
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="${env:OK_TEST_KAFKA_PASSWORD}" password="${file:` + secretsFile + `:kafka.password}";
group.id=${dir:` + filepath.Join(dir, "user") + `:password}
offset.storage.topic=${undeclared:x:y}
`, Config{Brokers: []string{"kafka:9092"}, SASL: SASL{Mechanism: MechanismPlain, Username: "from-env", Password: "from-file"}},
			Worker{GroupID: "from-dir", OffsetsTopic: "${undeclared:x:y}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props, err := ParseProperties(strings.NewReader(tt.props))
			if err != nil {
				t.Fatal(err)
			}
			c, w, err := FromWorkerProperties(props)
			if err != nil {
				t.Fatalf("FromWorkerProperties: %v", err)
			}
			if !reflect.DeepEqual(c, tt.config) {
				t.Errorf("config\n got %#v\nwant %#v\n(%+v %+v vs %+v %+v)", c, tt.config, c.TLS, c.SASL, tt.config.TLS, tt.config.SASL)
			}
			if w != tt.worker {
				t.Errorf("worker\n got %+v\nwant %+v", w, tt.worker)
			}
		})
	}
}

func TestFromWorkerPropertiesErrors(t *testing.T) {
	const secret = "hunter2-Secret"
	tests := []struct {
		name  string
		props map[string]string
		kind  error
		want  []string
	}{
		{"encrypted PEM key", map[string]string{"security.protocol": "SSL", "ssl.keystore.type": "PEM", "ssl.keystore.location": "/ks.pem", "ssl.key.password": secret},
			ErrEncryptedKey, []string{"ssl.key.password", "openssl pkey"}},
		{"encrypted inline key", map[string]string{"security.protocol": "SSL", "ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": "x", "ssl.keystore.key": "y", "ssl.key.password": secret},
			ErrEncryptedKey, []string{"ssl.key.password"}},
		{"inline certificates need PEM type", map[string]string{"security.protocol": "SSL", "ssl.truststore.certificates": "x"},
			ErrInvalidConfig, []string{"ssl.truststore.type=PEM"}},
		{"unknown endpoint identification", map[string]string{"security.protocol": "SSL", "ssl.endpoint.identification.algorithm": "ldaps2"},
			ErrInvalidConfig, []string{"ssl.endpoint.identification.algorithm"}},
		{"unknown security protocol", map[string]string{"security.protocol": "SSL_SASL"},
			ErrInvalidConfig, []string{"security.protocol", "SSL_SASL"}},
		{"GSSAPI by default", map[string]string{"security.protocol": "SASL_PLAINTEXT"},
			ErrInvalidConfig, []string{"GSSAPI", "not supported"}},
		{"unknown mechanism", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-1"},
			ErrInvalidConfig, []string{"SCRAM-SHA-1"}},
		{"bad JAAS", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="` + secret + `"`},
			ErrInvalidConfig, []string{"sasl.jaas.config", "semicolon"}},
		{"unsupported config provider", map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
			"config.providers": "secrets", "config.providers.secrets.class": "io.strimzi.kafka.KubernetesSecretConfigProvider",
			"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="${secrets:kafka/user:password}";`},
			ErrInvalidConfig, []string{"sasl.jaas.config", "secrets", "KubernetesSecretConfigProvider"}},
		{"missing provider file", map[string]string{"bootstrap.servers": "${file:/nonexistent/x.properties:servers}",
			"config.providers": "file", "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider"},
			os.ErrNotExist, []string{"bootstrap.servers", "/nonexistent/x.properties"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := FromWorkerProperties(tt.props)
			if !errors.Is(err, tt.kind) {
				t.Fatalf("got %v, want %v", err, tt.kind)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q shows a secret", err)
			}
		})
	}
}

func TestReadWorkerProperties(t *testing.T) {
	p := writeFile(t, t.TempDir(), "connect-distributed.properties", []byte("bootstrap.servers=k:9092\noffset.storage.topic=offs\n"))
	c, w, err := ReadWorkerProperties(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Brokers) != 1 || c.Brokers[0] != "k:9092" || w.OffsetsTopic != "offs" {
		t.Errorf("got %v %+v", c, w)
	}
	if _, _, err := ReadWorkerProperties(p + ".missing"); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), p) {
		t.Errorf("missing file: %v", err)
	}
}
