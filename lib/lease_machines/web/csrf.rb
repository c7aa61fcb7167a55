# frozen_string_literal: true

require "openssl"
require "securerandom"

module LeaseMachines
  class Web
    # The standalone app's CSRF protection, a signed double submit that needs
    # no session: a random value in an HttpOnly, SameSite=Lax cookie, and in
    # each form its HMAC under the app's secret. A POST passes when the
    # form's field is the HMAC of the cookie it came with. Another site can
    # neither read the cookie (nor so the field), nor, without the secret,
    # make a field for a cookie it managed to set. Inside Sidekiq Web,
    # Sidekiq's own protection is used instead.
    class CSRF
      COOKIE = "lease_machines_csrf"
      FIELD = "csrf_token"
      # Shortest secret accepted, in bytes.
      MIN_SECRET = 32
      VALUE = /\A[A-Za-z0-9_-]{43}\z/
      # A mount path the cookie can name as it is.
      PATH = %r{\A/[A-Za-z0-9_./~-]*\z}
      private_constant :VALUE, :PATH

      # @param secret [String, nil] at least 32 bytes; nil: a random one,
      #   good for this object only (set one when several processes serve the UI)
      def initialize(secret)
        unless secret.nil? || secret.is_a?(String)
          raise TypeError, "secret must be a String of at least #{MIN_SECRET} bytes, got #{secret.class}"
        end
        if secret && secret.bytesize < MIN_SECRET
          raise ArgumentError, "secret must be at least #{MIN_SECRET} bytes, got #{secret.bytesize}"
        end

        @secret = (secret || SecureRandom.bytes(MIN_SECRET)).b.freeze
        freeze
      end

      # The request's cookie value when it is one this class made the shape
      # of, else nil.
      def cookie_value(request)
        value = request.cookies[COOKIE]
        value if value&.match?(VALUE)
      end

      # A fresh cookie value.
      def new_value
        SecureRandom.urlsafe_base64(32)
      end

      # @return [String] the form field's value for a cookie value
      def field_for(value)
        OpenSSL::HMAC.hexdigest("SHA256", @secret, value)
      end

      # Whether a POST carries a cookie and the field made for it.
      def valid?(request)
        value = cookie_value(request)
        field = request.params[FIELD]
        return false unless value && field.is_a?(String)

        OpenSSL.secure_compare(field_for(value), field)
      end

      # The Set-Cookie header value: for the app's own path, HttpOnly,
      # SameSite=Lax (a cross-site POST carries no cookie), Secure over HTTPS.
      def set_cookie(value, request)
        path = request.script_name
        path = "/" unless path.match?(PATH)
        "#{COOKIE}=#{value}; Path=#{path}; HttpOnly; SameSite=Lax#{'; Secure' if request.https?}"
      end
    end
  end
end
