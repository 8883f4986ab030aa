# The NATS server of docker-compose.yml: nats-server at the version go.mod
# pins, the NATS CLI at the version tools/go.mod pins, and the probe that
# is the health check, all static, on nothing: no base image, no shell,
# nothing pulled. `make images` builds the binaries into bin/compose on
# the host first (no golang image can be pulled either), then this.
FROM scratch
COPY bin/compose/nats-server bin/compose/nats bin/compose/probe /bin/
COPY deploy/nats.conf /etc/nats/nats.conf
# Empty folders owned by the unprivileged user: a new named volume takes
# the owner of the folder it is mounted on, so the server can write its
# JetStream store there without running as root.
COPY --chown=65532:65532 bin/compose/empty/ /data/
COPY bin/compose/tmp/ /tmp/
USER 65532:65532
# The NATS CLI finds its config folder from the user's passwd entry
# unless XDG_CONFIG_HOME is set, and scratch has no /etc/passwd (it
# fails with "context not found" then).
ENV PATH=/bin HOME=/tmp XDG_CONFIG_HOME=/tmp/.config
EXPOSE 4222 6222
ENTRYPOINT ["/bin/nats-server", "-c", "/etc/nats/nats.conf"]
