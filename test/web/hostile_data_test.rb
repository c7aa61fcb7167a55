# frozen_string_literal: true

require_relative "web_helper"

module LeaseMachines
  # Names, labels, filters and event payloads made to break out of the HTML:
  # every one is shown as text.
  class WebHostileDataTest < Minitest::Test
    include WebTestHelper

    SCRIPT = %(<script>alert("lm")</script>)
    ATTRIBUTE = %("><img src=x onerror=alert('lm')>)
    AMPERSAND = "a&b'c"

    def setup
      super
      [SCRIPT, ATTRIBUTE, AMPERSAND].each { |name| @store.authority(name).acquire(owner: 7, ttl: 60) }
      @app = mounted(Web.new(store: @store, who: ->(_env) { SCRIPT }))
    end

    def test_names_are_escaped_in_the_list_and_in_their_links
      body = request(@app, "GET", "/").body
      assert_no_markup body
      assert_includes body, "&lt;script&gt;alert(&quot;lm&quot;)&lt;/script&gt;</a>"
      assert_includes body, "&quot;&gt;&lt;img src=x onerror=alert(&#39;lm&#39;)&gt;</a>"
      assert_includes body, "a&amp;b&#39;c</a>"
      assert_includes body, %(href="/leases/resource?name=%3Cscript%3Ealert%28%22lm%22%29%3C%2Fscript%3E")
      assert_includes body, %(href="/leases/resource?name=a%26b%27c")
    end

    def test_names_are_escaped_on_the_resource_and_confirmation_pages_and_in_the_events
      [SCRIPT, ATTRIBUTE].each do |name|
        query = URI.encode_www_form_component(name)
        assert_no_markup request(@app, "GET", "/resource?name=#{query}").body
        confirm = request(@app, "GET", "/release?name=#{query}").body
        assert_no_markup confirm
        assert_includes confirm, %(<input type="hidden" name="name" value="#{Web::HTML.h(name)}">)
      end
      Web::RecentEvents.shared
      assert_equal 303, release(@app, SCRIPT).status, "the escaped hidden field names the resource exactly"
      body = request(@app, "GET", "/resource?name=#{URI.encode_www_form_component(SCRIPT)}").body
      assert_includes body, "<td>force_released</td>"
      assert_includes body, "<td>&lt;script&gt;alert(&quot;lm&quot;)&lt;/script&gt;</td></tr>", "who, escaped"
      assert_no_markup body
    end

    def test_filters_and_bad_bytes_in_the_query_are_escaped
      body = request(@app, "GET", "/?match=%22%3E%3Cscript%3E").body
      assert_no_markup body
      assert_includes body, %(value="&quot;&gt;&lt;script&gt;")
      assert_includes body, %(match <code>&quot;&gt;&lt;script&gt;</code>)
      missing = request(@app, "GET", "/resource?name=%FF%3Cb%3E")
      assert_equal 404, missing.status
      assert_includes missing.body, "No resource named &quot;\u{FFFD}&lt;b&gt;&quot; in this store."
      assert missing.body.valid_encoding?
    end

    def test_labels_with_markup_quotes_and_invalid_bytes_are_escaped
      views = Web::Views.new
      frame = Web::Pages::Frame.new(index_path: "/leases/", base: "/leases", csrf_field: "", read_only: false)
      labels = [%(<b>host</b> "pid" 'job'), "job \xFF\xFE".b, "caf\xE9 <i>".dup.force_encoding(Encoding::ISO_8859_1)]
      statuses = labels.each_with_index.map do |label, at|
        status = @store.status(SCRIPT).to_h.merge(name: "job/#{at}", label: label)
        Stores::Status.new(**status).freeze
      end
      body = views.index(frame, Web::Listing.new(statuses.map(&:name), filter: nil, page: nil, per_page: 10) do
        [statuses, {}]
      end)
      assert body.valid_encoding?
      assert_equal ["&lt;b&gt;host&lt;/b&gt; &quot;pid&quot; &#39;job&#39;", "job \u{FFFD}\u{FFFD}", "café &lt;i&gt;"],
                   body.scan(%r{<td class="lm-holder">(.*?)</td>}).flatten
      resource = views.resource(frame, statuses.first, nil, nil, nil)
      assert_includes resource, %(<td class="lm-holder">&lt;b&gt;host&lt;/b&gt; &quot;pid&quot; &#39;job&#39;</td>)
      assert_no_markup resource
      confirm = views.confirm(frame, statuses.first)
      assert_includes confirm, %(<strong class="lm-holder">&lt;b&gt;host&lt;/b&gt; &quot;pid&quot; &#39;job&#39;</strong>)
    end

    private

    # No markup but the page's own: none of the hostile strings, raw.
    def assert_no_markup(body)
      [SCRIPT, "<script>", "<img", "onerror=alert('lm')>", "<b>", "<i>", AMPERSAND].each do |raw|
        refute_includes body, raw
      end
    end
  end
end
