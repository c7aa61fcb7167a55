# frozen_string_literal: true

require "lease_machines"
require_relative "web/html"
require_relative "web/views"
require_relative "web/listing"
require_relative "web/recent_events"
require_relative "web/force_release"
require_relative "web/pages"
require_relative "web/request"
require_relative "web/csrf"

module LeaseMachines
  # The operators' web UI (docs/OPERATIONS.md#web-ui): every resource of a
  # store, one resource's status, fence mark and recent events, and a force
  # release behind a confirmation and CSRF protection. A plain Rack app
  # (it uses no Rack code, only `call(env)`), mounted by the host:
  #
  #   mount LeaseMachines::Web.new(store: store) => "/leases"   # Rails routes
  #   map("/leases") { run LeaseMachines::Web.new }              # config.ru
  #
  # and the same pages as a Sidekiq Web tab (`lease_machines/web/sidekiq_tab`).
  class Web
    # Who asked for a release, by default: the user a server authenticated
    # (REMOTE_USER), else the client's address.
    DEFAULT_WHO = ->(env) { env["REMOTE_USER"] || env["REMOTE_ADDR"] }
    # Resources on one page, by default, and at most.
    PER_PAGE = 100
    MAX_PER_PAGE = 1000
    # The standalone pages' headers: no script at all, nothing cached, not framed.
    HEADERS = {
      "content-type" => "text/html; charset=utf-8",
      "cache-control" => "no-store",
      "content-security-policy" => "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; " \
                                   "base-uri 'none'; frame-ancestors 'none'",
      "x-content-type-options" => "nosniff",
      "referrer-policy" => "same-origin"
    }.freeze

    # `mount LeaseMachines::Web => "/leases"`: one UI on the configured store, built on first use.
    def self.call(env)
      (@default ||= new).call(env)
    end

    # @return [Pages] what the standalone app and a Sidekiq tab serve
    attr_reader :pages

    # @param store [#names, #statuses, #status, #force_release, nil] nil: the
    #   configured store (`LeaseMachines.configuration.store`), read at each request
    # @param fences [#highest, nil] a fence (a `LeaseMachines::Fences::*`)
    #   whose marks the resource pages show
    # @param read_only [Boolean] no release: no button, and the POST refused (403)
    # @param who [#call] the Rack env -> who is asking, for the release's log
    #   line and event (default {DEFAULT_WHO})
    # @param per_page [Integer] resources on one page of the list
    # @param secret [String, nil] the CSRF key (at least 32 bytes); nil: a
    #   random one, good for this process (give one when several serve the UI)
    # @param events [Boolean] show the events this process saw
    #   ({RecentEvents}: subscribes one ring per process)
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

    # @return [#statuses] the store the pages read
    def store
      @store || LeaseMachines.configuration.store
    end

    def read_only?
      @read_only
    end

    # @return [String] who is asking, in words ("unknown" when `who:` says nothing)
    def who(env)
      who = @who.call(env)
      who.nil? || who.to_s.empty? ? "unknown" : who.to_s
    end

    # The Rack entry point.
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

    def inspect
      "#<#{self.class.name} store=#{@store ? @store.inspect : '(configured)'}#{' read_only' if @read_only}>"
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

    # Read-only refuses before CSRF is looked at: both are 403, read-only says why.
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
