#!/bin/sh
# make.sh makes the JKS and PKCS12 fixtures of keystore_test.go with keytool
# (Debian: apt-get install default-jdk-headless), as a Connect operator
# would. Certificates are valid for 100 years. Run it from this directory:
#
#   ca.p12         the CA (key and certificate), password ca-pass
#   broker.p12     the broker's key and certificate for 127.0.0.1 and
#                  localhost, signed by the CA, password broker-pass
#   truststore.jks the CA as a trusted entry, password trust-pass
#   truststore.p12 the same as PKCS12, password trust-pass
#   keystore.jks   the client's key and chain, store password store-pass,
#                  key password key-pass (ssl.key.password)
#   keystore.p12   the same as PKCS12, password store-pass
set -eu
rm -f ./*.jks ./*.p12 ./*.crt ./*.csr
days=36500
kt() { keytool -noprompt "$@"; }

kt -genkeypair -alias ca -keyalg EC -groupname secp256r1 -dname CN=offsetkeeper-test-ca \
	-ext bc:c -validity $days -storetype PKCS12 -keystore ca.p12 -storepass ca-pass
kt -exportcert -rfc -alias ca -keystore ca.p12 -storepass ca-pass -file ca.crt

# The broker: a key, a request, the CA's signature, then the chain back in.
kt -genkeypair -alias broker -keyalg EC -groupname secp256r1 -dname CN=broker \
	-validity $days -storetype PKCS12 -keystore broker.p12 -storepass broker-pass
kt -certreq -alias broker -keystore broker.p12 -storepass broker-pass -file broker.csr
kt -gencert -alias ca -keystore ca.p12 -storepass ca-pass -infile broker.csr -outfile broker.crt -rfc \
	-validity $days -ext SAN=ip:127.0.0.1,dns:localhost -ext EKU=serverAuth
kt -importcert -alias ca -file ca.crt -keystore broker.p12 -storepass broker-pass
kt -importcert -alias broker -file broker.crt -keystore broker.p12 -storepass broker-pass
kt -delete -alias ca -keystore broker.p12 -storepass broker-pass

# The truststores a worker's ssl.truststore.location points at.
kt -importcert -alias ca -file ca.crt -storetype JKS -keystore truststore.jks -storepass trust-pass
kt -importcert -alias ca -file ca.crt -storetype PKCS12 -keystore truststore.p12 -storepass trust-pass

# The client keystore, JKS with its own key password, then as PKCS12.
kt -genkeypair -alias client -keyalg EC -groupname secp256r1 -dname CN=offsetkeeper \
	-validity $days -storetype JKS -keystore keystore.jks -storepass store-pass -keypass key-pass
kt -certreq -alias client -keystore keystore.jks -storepass store-pass -keypass key-pass -file client.csr
kt -gencert -alias ca -keystore ca.p12 -storepass ca-pass -infile client.csr -outfile client.crt -rfc \
	-validity $days -ext EKU=clientAuth
kt -importcert -alias ca -file ca.crt -keystore keystore.jks -storepass store-pass
kt -importcert -alias client -file client.crt -keystore keystore.jks -storepass store-pass -keypass key-pass
kt -delete -alias ca -keystore keystore.jks -storepass store-pass
kt -importkeystore -srckeystore keystore.jks -srcstorepass store-pass -srcalias client -srckeypass key-pass \
	-destkeystore keystore.p12 -deststoretype PKCS12 -deststorepass store-pass -destkeypass store-pass

rm -f ./*.crt ./*.csr
