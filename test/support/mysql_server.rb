# frozen_string_literal: true

require "mysql2"
require "securerandom"
require "uri"

module LeaseMachines
  # The MySQL/MariaDB server of the tests: MYSQL_URL, else the URL
  # `script/mysql start` prints. Each test process works in a database of its
  # own (the URL's path), dropped when the suite ends, so it never sees
  # another process's rows.
  module MySQLServer
    DEFAULT_URL = "mysql2://root@127.0.0.1:33069/lease_machines_test"

    class << self
      def base_url
        ENV.fetch("MYSQL_URL", DEFAULT_URL)
      end

      def database
        @database ||= "lm_test_#{Process.pid}_#{SecureRandom.hex(3)}"
      end

      # The URL of this process's database (created on first use).
      def url
        @url ||= begin
          uri = URI.parse(base_url)
          uri.path = "/#{database}"
          prepare_database
          uri.to_s
        end
      end

      # A new client on this process's database (or `database`); fails (never
      # skips) with what to do when the server is down.
      def connect(database: self.database, **options)
        uri = URI.parse(base_url)
        Mysql2::Client.new(host: uri.host, port: uri.port, username: uri.user || "root",
                           password: uri.password && URI.decode_www_form_component(uri.password),
                           database: database, encoding: "utf8mb4", **options)
      rescue Mysql2::Error::ConnectionError => e
        raise "MySQL is not reachable at #{base_url}: #{e.message}\n" \
              "Start the test server with `script/mysql start` (bin/test starts it), or set MYSQL_URL."
      end

      # A database of its own for one test (dropped when the suite ends).
      def scratch_database
        name = "lm_scratch_#{Process.pid}_#{SecureRandom.hex(3)}"
        admin { |client| client.query("CREATE DATABASE #{name}") }
        scratch << name
        name
      end

      private

      def scratch
        @scratch ||= []
      end

      def admin
        client = connect(database: nil)
        yield client
      ensure
        client&.close
      end

      def prepare_database
        admin { |client| client.query("CREATE DATABASE IF NOT EXISTS #{database}") }
        require "lease_machines/stores/mysql"
        client = connect
        Stores::MySQL.new(client).setup!
        client.close
        owner = Process.pid
        Minitest.after_run { drop_databases if Process.pid == owner }
      end

      def drop_databases
        admin { |client| ([database] + scratch).each { |name| client.query("DROP DATABASE IF EXISTS #{name}") } }
      rescue Mysql2::Error
        nil
      end
    end
  end
end
