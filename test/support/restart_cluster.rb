# frozen_string_literal: true

require "uri"

module LeaseMachines
  # A PostgreSQL cluster of a restart test's own, which it may stop and start:
  # the cluster every other test uses is never restarted. Its port is the test
  # cluster's (DATABASE_URL) plus an offset, and its folder is named after that
  # port, so two checkouts whose test clusters differ never share one.
  #
  # The cluster starts while the suite runs, with hundreds of client
  # connections open: a port in the kernel's ephemeral range (32768-60999 on
  # Linux) can be the local port of one of them, and the server's bind then
  # fails ("Address already in use"). Such a port is moved 30,000 down, out of
  # that range, keeping the offsets between checkouts.
  module RestartCluster
    DEFAULT_PORT = 54_329
    EPHEMERAL = (32_768..60_999)

    # @param offset [Integer] distinct per test file
    # @return [Hash{String=>String}] the environment for script/postgres
    def self.environment(offset)
      base = URI(ENV.fetch("DATABASE_URL", "postgres://127.0.0.1:#{DEFAULT_PORT}")).port || DEFAULT_PORT
      port = outside_ephemeral(base + offset)
      { "LEASE_MACHINES_PG_PORT" => port.to_s, "LEASE_MACHINES_PG_DIR" => "/tmp/lm_restart_pg_#{port}" }.freeze
    end

    # @return [Integer] `port`, or 30,000 below it when it is in the
    #   ephemeral range (also for the MySQL server of a restart test)
    def self.outside_ephemeral(port)
      EPHEMERAL.cover?(port) ? port - 30_000 : port
    end
  end
end
