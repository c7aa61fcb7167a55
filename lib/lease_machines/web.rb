# frozen_string_literal: true

require "lease_machines"
require_relative "web/html"
require_relative "web/views"
require_relative "web/listing"
require_relative "web/recent_events"
require_relative "web/pages"
require_relative "web/request"
require_relative "web/csrf"

module LeaseMachines
  # The operators' web UI (docs/OPERATIONS.md#web-ui).
  class Web
    DEFAULT_WHO = ->(env) { env["REMOTE_USER"] || env["REMOTE_ADDR"] }
    PER_PAGE = 100
    MAX_PER_PAGE = 1000
    HEADERS = {
      "content-type" => "text/html; charset=utf-8",
      "cache-control" => "no-store",
      "content-security-policy" => "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; " \
                                   "base-uri 'none'; frame-ancestors 'none'",
      "x-content-type-options" => "nosniff",
      "referrer-policy" => "same-origin"
    }.freeze

    def self.call(env) = (@default ||= new).call(env)

    attr_reader :pages

    # rubocop:disable Metrics/ParameterLists -- keywords, each one option
    def initialize(store: nil, fences: nil, read_only: false, who: DEFAULT_WHO, per_page: PER_PAGE, secret: nil,
                   events: true)
      # rubocop:enable Metrics/ParameterLists
      check_parts(store, fences, who)
      @store = store
      @read_only = boolean(read_only, "read_only")
      @who = who
      @csrf = CSRF.new(secret)
      @pages = Pages.new(store: method(:store), fences: fences, per_page: page_size(per_page),
                         events: boolean(events, "events") ? RecentEvents.shared : nil)
      freeze
    end

    def store = @store || LeaseMachines.configuration.store
    def read_only? = @read_only
    def who(env) = @who.call(env).to_s.then { |who| who.empty? ? "unknown" : who }
    def inspect = "#<#{self.class.name} store=#{@store ? @store.inspect : '(configured)'}#{' read_only' if @read_only}>"

    def call(env)
      request = Request.new(env)
      value = @csrf.cookie_value(request)
      cookie = value ? nil : @csrf.new_value
      frame = frame(request, value || cookie)
      respond(request, route(request, frame), frame, cookie && @csrf.set_cookie(cookie, request))
    rescue Request::BadRequest => e
      frame = frame(request, nil)
      respond(request, @pages.message(frame, 400, e.message, nil), frame, nil)
    end

    private

    def check_parts(store, fences, who)
      unless store.nil? || %i[names statuses status force_release].all? { |call| store.respond_to?(call) }
        raise TypeError, "store must be a lease store (LeaseMachines::Stores::*) or nil, got #{Stores.described(store)}"
      end
      unless fences.nil? || fences.respond_to?(:highest)
        raise TypeError, "fences must respond to #highest (a fence) or be nil, got #{fences.inspect}"
      end
      raise TypeError, "who must respond to #call (env -> String), got #{who.inspect}" unless who.respond_to?(:call)
    end

    def boolean(value, name)
      return value if [true, false].include?(value)

      raise TypeError, "#{name} must be true or false, got #{value.inspect}"
    end

    def page_size(per_page)
      raise TypeError, "per_page must be an Integer, got #{per_page.inspect}" unless per_page.is_a?(Integer)
      return per_page if (1..MAX_PER_PAGE).cover?(per_page)

      raise ArgumentError, "per_page must be between 1 and #{MAX_PER_PAGE}, got #{per_page}"
    end

    def frame(request, csrf_value)
      field = csrf_value && %(<input type="hidden" name="#{CSRF::FIELD}" value="#{@csrf.field_for(csrf_value)}">)
      Pages::Frame.new(index_path: "#{request.script_name}/", base: request.script_name, csrf_field: field,
                       read_only: @read_only)
    end

    def route(request, frame)
      params = request.params
      case [request.method, request.path]
      when %w[GET /], %w[HEAD /] then @pages.index(params, frame)
      when %w[GET /resource], %w[HEAD /resource] then @pages.resource(params, frame)
      when %w[GET /release] then @pages.confirm(params, frame)
      when %w[POST /release] then release(request, frame)
      else @pages.not_found(frame)
      end
    end

    def release(request, frame)
      return @pages.read_only(frame) if @read_only

      unless @csrf.valid?(request)
        return @pages.message(frame, 403, "The form's CSRF token does not match its cookie: nothing was released. " \
                                          "Reload the page and try again.", nil)
      end

      @pages.release(request.params, frame, by: who(request.env))
    end

    def respond(request, page, frame, set_cookie)
      headers = HEADERS.dup
      headers["set-cookie"] = set_cookie if set_cookie
      return [page.status, headers.merge("location" => page.location), []] if page.location

      html = @pages.layout(frame, page)
      headers["content-length"] = html.bytesize.to_s
      [page.status, headers, request.method == "HEAD" ? [] : [html]]
    end
  end
end
