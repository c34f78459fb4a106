#!/bin/sh
# Regenerates the *.golden files from the *.in files with real Jackson and two
# JDKs (Debian: libjackson2-databind-java; openjdk-17 and a JDK 19 or later).
# JDK17 and JDK19 name the java binaries; the defaults are this machine's.
set -eu
cd "$(dirname "$0")"
JDK17=${JDK17:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
JDK19=${JDK19:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
CP=/usr/share/java/jackson-core.jar:/usr/share/java/jackson-databind.jar:/usr/share/java/jackson-annotations.jar
for mode in keys values pairs hashmap; do
	"$JDK19" -cp "$CP" Oracle.java "$mode" <"$mode.in" >"$mode.golden"
done
"$JDK19" -cp "$CP" Oracle.java doubles <doubles.in >doubles.new.tmp
"$JDK17" -cp "$CP" Oracle.java doubles <doubles.in | cut -f1 >doubles.old.tmp
paste doubles.new.tmp doubles.old.tmp >doubles.golden
rm doubles.new.tmp doubles.old.tmp
