# frozen_string_literal: true

require "uri"

module LeaseMachines
  module Stores
    class MySQL < Store
      # A connection URL (`mysql2://user:password@host:port/database?read_timeout=5`, or `mysql://`) as
      # Mysql2::Client options; the query may set the options below.
      module URL
        SCHEMES = %w[mysql2 mysql].freeze
        INTEGER_OPTIONS = %w[connect_timeout read_timeout write_timeout].freeze
        STRING_OPTIONS = %w[socket encoding ssl_mode sslca sslcert sslkey].freeze

        class << self
          # @raise [ArgumentError] naming what is wrong with the URL
          def options(url)
            uri = parse(url)
            options = { host: uri.host.to_s.empty? ? "localhost" : uri.host, port: uri.port || 3306,
                        username: decode(uri.user) || "root", password: decode(uri.password),
                        database: decode(uri.path.delete_prefix("/")), encoding: "utf8mb4" }
            options.merge!(query(uri.query, url)).compact.tap { |all| all.delete(:database) if all[:database] == "" }
          end

          private

          def parse(url)
            uri = URI.parse(url)
            return uri if SCHEMES.include?(uri.scheme)

            raise ArgumentError, "connection URL must start with mysql2:// (or mysql://), got #{shown(url)}"
          rescue URI::InvalidURIError => e
            raise ArgumentError, "connection URL is not a URL (#{e.message}): #{shown(url)}"
          end

          def query(text, url)
            URI.decode_www_form(text.to_s).to_h do |key, value|
              if INTEGER_OPTIONS.include?(key)
                unless value.match?(/\A[1-9][0-9]{0,6}\z/)
                  raise ArgumentError, "connection URL option #{key} must be a positive whole number of seconds, " \
                                       "got #{value.inspect}"
                end
                [key.to_sym, Integer(value, 10)]
              elsif STRING_OPTIONS.include?(key)
                [key.to_sym, value]
              else
                raise ArgumentError, "connection URL option #{key.inspect} is not one the MySQL store knows " \
                                     "(#{(INTEGER_OPTIONS + STRING_OPTIONS).join(', ')}): #{shown(url)}"
              end
            end
          end

          def decode(part) = part && URI.decode_www_form_component(part)
          def shown(url) = url.sub(%r{(//[^:/@]*:)[^@/]*@}, '\1***@').inspect
        end
      end
      private_constant :URL
    end
  end
end
