# A jido-bus node of docker-compose.yml: the static binary built from this
# checkout (CGO_ENABLED=0) and the probe that is its health check, on
# nothing: no base image, no shell, nothing pulled. `make images` builds
# the binaries into bin/compose on the host first, then this. No CA
# bundle: the node talks to NATS on the compose network, unencrypted;
# add one (COPY a ca-certificates.crt to /etc/ssl/certs/) to reach a model
# provider over HTTPS.
FROM scratch
COPY bin/compose/jido-bus bin/compose/probe /bin/
# The data dir (a named volume in compose) and /tmp, owned so that the
# unprivileged user can write them: see nats.Dockerfile.
COPY --chown=65532:65532 bin/compose/empty/ /data/
COPY bin/compose/tmp/ /tmp/
USER 65532:65532
# The NATS CLI finds its config folder from the user's passwd entry
# unless XDG_CONFIG_HOME is set, and scratch has no /etc/passwd (it
# fails with "context not found" then).
ENV PATH=/bin HOME=/data XDG_CONFIG_HOME=/data/.config
ENTRYPOINT ["/bin/jido-bus"]
CMD ["serve", "--help"]
