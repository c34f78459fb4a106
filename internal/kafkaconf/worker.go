package kafkaconf

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Worker names the internal topics and group of a Kafka Connect distributed
// worker, as read from its properties. An empty field was not set; callers
// apply their own defaults.
type Worker struct {
	// OffsetsTopic is offset.storage.topic.
	OffsetsTopic string
	// ConfigTopic is config.storage.topic.
	ConfigTopic string
	// StatusTopic is status.storage.topic.
	StatusTopic string
	// GroupID is group.id, the worker group.
	GroupID string
}

// ReadWorkerProperties reads a Kafka Connect worker .properties file with
// ParseProperties and returns FromWorkerProperties of it.
func ReadWorkerProperties(path string) (Config, Worker, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, Worker{}, fmt.Errorf("read worker properties %s: %w", path, err)
	}
	defer f.Close()
	props, err := ParseProperties(f)
	if err != nil {
		return Config{}, Worker{}, fmt.Errorf("read worker properties %s: %w", path, err)
	}
	c, w, err := FromWorkerProperties(props)
	if err != nil {
		return Config{}, Worker{}, fmt.Errorf("worker properties %s: %w", path, err)
	}
	return c, w, nil
}

// FromWorkerProperties reads the client settings and internal topic names of a
// Kafka Connect worker from its properties (see ParseProperties):
//
//   - bootstrap.servers, and offset.storage.topic, config.storage.topic,
//     status.storage.topic and group.id into Worker;
//   - security.protocol: PLAINTEXT (default), SSL, SASL_PLAINTEXT or SASL_SSL;
//   - for SSL and SASL_SSL: ssl.truststore.location or
//     ssl.truststore.certificates, ssl.keystore.location (one PEM file with the
//     certificate chain and the private key, as Kafka's PEM keystore) or
//     ssl.keystore.certificate.chain and ssl.keystore.key, and
//     ssl.endpoint.identification.algorithm (empty: skip hostname
//     verification). ssl.truststore.type and ssl.keystore.type may be JKS
//     (Kafka's default), PKCS12 or PEM; JKS and PKCS12 stores are read with
//     ssl.truststore.password, ssl.keystore.password and ssl.key.password
//     (see Store). A PEM key with ssl.key.password (an encrypted key) is an
//     error that says how to decrypt it;
//   - for SASL_*: sasl.mechanism (default GSSAPI, which is unsupported) and
//     the username and password of a PlainLoginModule or ScramLoginModule
//     sasl.jaas.config (tokenauth=true marks a SCRAM delegation token).
//
// A key missing at the top level is taken from its admin.-prefixed copy; the
// producer.- and consumer.- prefixed copies, which configure connectors'
// clients, are ignored. Values are trimmed, as Kafka trims them. References to
// the FileConfigProvider, DirectoryConfigProvider and EnvVarConfigProvider
// declared in config.providers (${name:path:key}, ${name:key}) are resolved;
// other providers are an error. Other keys are ignored. Errors name keys and
// files, never values.
func FromWorkerProperties(props map[string]string) (Config, Worker, error) {
	p := workerProps{props: props}
	var (
		c   Config
		w   Worker
		err error
	)
	get := func(key string) string {
		if err != nil {
			return ""
		}
		var v string
		v, _, err = p.get(key)
		return v
	}
	c.Brokers = parseBootstrap(get("bootstrap.servers"))
	w.OffsetsTopic = get("offset.storage.topic")
	w.ConfigTopic = get("config.storage.topic")
	w.StatusTopic = get("status.storage.topic")
	w.GroupID = get("group.id")
	proto := strings.ToUpper(cmpOr(get("security.protocol"), "PLAINTEXT"))
	if err != nil {
		return Config{}, Worker{}, err
	}
	switch proto {
	case "PLAINTEXT", "SASL_PLAINTEXT":
	case "SSL", "SASL_SSL":
		if c.TLS, err = p.tls(); err != nil {
			return Config{}, Worker{}, err
		}
	default:
		return Config{}, Worker{}, fmt.Errorf("%w: unknown security.protocol %q (want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL)", ErrInvalidConfig, proto)
	}
	if strings.HasPrefix(proto, "SASL_") {
		if c.SASL, err = p.sasl(); err != nil {
			return Config{}, Worker{}, err
		}
	}
	return c, w, nil
}

type workerProps struct {
	props map[string]string
}

// get returns the trimmed, resolved value of key, or of admin.key if key is
// not set, and whether either was set.
func (p workerProps) get(key string) (string, bool, error) {
	name := key
	v, ok := p.props[key]
	if !ok {
		name = "admin." + key
		if v, ok = p.props[name]; !ok {
			return "", false, nil
		}
	}
	v, err := p.resolve(name, v)
	if err != nil {
		return "", true, err
	}
	return javaTrim(v), true, nil
}

// javaTrim is String.trim: it removes leading and trailing characters <= ' '.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

func parseBootstrap(s string) []string {
	var out []string
	for b := range strings.SplitSeq(s, ",") {
		b = javaTrim(b)
		if i := strings.Index(b, "://"); i >= 0 {
			b = b[i+3:] // a listener prefix such as SASL_SSL://
		}
		if b != "" {
			out = append(out, b)
		}
	}
	return out
}

// Config provider classes that can be resolved outside a JVM.
const (
	fileProviderClass = "org.apache.kafka.common.config.provider.FileConfigProvider"
	dirProviderClass  = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
	envProviderClass  = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
)

// providerRef is Kafka's ConfigTransformer pattern: ${provider:[path:]key}.
var providerRef = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// resolve replaces config provider references in the value of key.
func (p workerProps) resolve(key, v string) (string, error) {
	if !strings.Contains(v, "${") {
		return v, nil
	}
	var err error
	out := providerRef.ReplaceAllStringFunc(v, func(ref string) string {
		if err != nil {
			return ""
		}
		m := providerRef.FindStringSubmatch(ref)
		name, path, field := m[1], m[3], m[4]
		declared := false
		for n := range strings.SplitSeq(p.props["config.providers"], ",") {
			declared = declared || javaTrim(n) == name
		}
		class := javaTrim(p.props["config.providers."+name+".class"])
		if !declared || class == "" {
			// Kafka leaves undeclared references as they are.
			return ref
		}
		var s string
		switch class {
		case fileProviderClass:
			var f *os.File
			if f, err = os.Open(path); err != nil {
				err = fmt.Errorf("resolve %s: config provider %s: %w", key, name, err)
				return ""
			}
			defer f.Close()
			var fp map[string]string
			if fp, err = ParseProperties(f); err != nil {
				err = fmt.Errorf("resolve %s: config provider %s: %s: %w", key, name, path, err)
				return ""
			}
			s = fp[field]
		case dirProviderClass:
			var b []byte
			if filepath.Base(field) != field {
				err = fmt.Errorf("%w: resolve %s: config provider %s: %q is not a file name", ErrInvalidConfig, key, name, field)
				return ""
			}
			if b, err = os.ReadFile(filepath.Join(path, field)); err != nil {
				err = fmt.Errorf("resolve %s: config provider %s: %w", key, name, err)
				return ""
			}
			s = string(b)
		case envProviderClass:
			if path != "" {
				field = path + ":" + field
			}
			s = os.Getenv(field)
		default:
			err = fmt.Errorf("%w: %s refers to config provider %s (%s), which offsetkeeper cannot resolve: put the value in the file or pass it as a flag",
				ErrInvalidConfig, key, name, class)
			return ""
		}
		return s
	})
	if err != nil {
		return "", err
	}
	return out, nil
}

func (p workerProps) tls() (TLS, error) {
	t := TLS{Enabled: true}
	var err error
	get := func(key string) (string, bool) {
		if err != nil {
			return "", false
		}
		v, ok, e := p.get(key)
		err = e
		return v, ok
	}
	tsType, _ := get("ssl.truststore.type")
	tsLoc, _ := get("ssl.truststore.location")
	tsPEM, _ := get("ssl.truststore.certificates")
	ksType, _ := get("ssl.keystore.type")
	ksLoc, _ := get("ssl.keystore.location")
	ksChain, _ := get("ssl.keystore.certificate.chain")
	ksKey, _ := get("ssl.keystore.key")
	keyPass, _ := get("ssl.key.password")
	tsPass, _ := get("ssl.truststore.password")
	ksPass, _ := get("ssl.keystore.password")
	algo, algoSet := get("ssl.endpoint.identification.algorithm")
	if err != nil {
		return TLS{}, err
	}
	tsType = strings.ToUpper(cmpOr(tsType, "JKS")) // Kafka's default
	ksType = strings.ToUpper(cmpOr(ksType, "JKS"))

	switch {
	case tsPEM != "":
		if tsType != "PEM" {
			return TLS{}, fmt.Errorf("%w: ssl.truststore.certificates needs ssl.truststore.type=PEM", ErrInvalidConfig)
		}
		t.CAPEM = tsPEM
	case tsLoc != "" && tsType == StorePEM:
		t.CAFile = tsLoc
	case tsLoc != "" && (tsType == StoreJKS || tsType == StorePKCS12):
		t.Truststore = Store{File: tsLoc, Type: tsType, Password: Secret(tsPass)}
	case tsLoc != "":
		return TLS{}, fmt.Errorf("%w: ssl.truststore.type %q for ssl.truststore.location %s: want JKS, PKCS12 or PEM", ErrInvalidConfig, tsType, tsLoc)
	}

	switch {
	case ksChain != "" || ksKey != "":
		if ksType != "PEM" {
			return TLS{}, fmt.Errorf("%w: ssl.keystore.certificate.chain and ssl.keystore.key need ssl.keystore.type=PEM", ErrInvalidConfig)
		}
		if keyPass != "" {
			return TLS{}, fmt.Errorf("%w: ssl.key.password is set, so ssl.keystore.key is encrypted; %s", ErrEncryptedKey, decryptKeyHelp)
		}
		t.CertPEM, t.KeyPEM = ksChain, Secret(ksKey)
	case ksLoc != "" && (ksType == StoreJKS || ksType == StorePKCS12):
		t.Keystore = Store{File: ksLoc, Type: ksType, Password: Secret(ksPass), KeyPassword: Secret(keyPass)}
	case ksLoc != "" && ksType != StorePEM:
		return TLS{}, fmt.Errorf("%w: ssl.keystore.type %q for ssl.keystore.location %s: want JKS, PKCS12 or PEM", ErrInvalidConfig, ksType, ksLoc)
	case ksLoc != "":
		if keyPass != "" {
			return TLS{}, fmt.Errorf("%w: ssl.key.password is set, so the key in ssl.keystore.location %s is encrypted; %s", ErrEncryptedKey, ksLoc, decryptKeyHelp)
		}
		t.CertFile, t.KeyFile = ksLoc, ksLoc
	}

	switch {
	case !algoSet, strings.EqualFold(algo, "https"):
	case algo == "":
		t.SkipHostnameVerification = true
	default:
		return TLS{}, fmt.Errorf("%w: ssl.endpoint.identification.algorithm %q: want https or empty", ErrInvalidConfig, algo)
	}
	return t, nil
}

func (p workerProps) sasl() (SASL, error) {
	mech, _, err := p.get("sasl.mechanism")
	if err != nil {
		return SASL{}, err
	}
	s := SASL{Mechanism: strings.ToUpper(cmpOr(mech, "GSSAPI"))} // Kafka's default
	switch s.Mechanism {
	case MechanismPlain, MechanismScramSHA256, MechanismScramSHA512, MechanismOAuthBearer, MechanismAWSMSKIAM:
	case "GSSAPI":
		return SASL{}, fmt.Errorf("%w: sasl.mechanism GSSAPI (Kerberos, Kafka's default) is not supported; use one of %s",
			ErrInvalidConfig, strings.Join(Mechanisms, ", "))
	default:
		return SASL{}, fmt.Errorf("%w: unknown sasl.mechanism %q; use one of %s", ErrInvalidConfig, mech, strings.Join(Mechanisms, ", "))
	}
	jaas, _, err := p.get("sasl.jaas.config")
	if err != nil || jaas == "" {
		return s, err
	}
	e, err := parseJAAS(jaas)
	if err != nil {
		return SASL{}, fmt.Errorf("%w: sasl.jaas.config: %w", ErrInvalidConfig, err)
	}
	if s.Mechanism == MechanismPlain || strings.HasPrefix(s.Mechanism, "SCRAM-") {
		s.Username = e.Options["username"]
		s.Password = Secret(e.Options["password"])
		s.ScramToken = strings.HasPrefix(s.Mechanism, "SCRAM-") && strings.EqualFold(e.Options["tokenauth"], "true")
	}
	return s, nil
}
