package urlnorm_test

import (
	"fmt"
	"net/url"

	"github.com/trawl-crawler/trawl/urlnorm"
)

func ExampleCanonical() {
	page, _ := url.Parse("https://www.example.com/news/today.html")
	for _, href := range []string{
		"../sport/?utm_source=feed&id=7#comments",
		"HTTPS://WWW.EXAMPLE.COM:443/news/./today.html",
		"mailto:editor@example.com",
	} {
		c, err := urlnorm.Canonical(href, page)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(c)
	}
	// Output:
	// https://www.example.com/sport/?id=7
	// https://www.example.com/news/today.html
	// error: urlnorm: parse "mailto:editor@example.com": scheme "mailto" is not http or https
}

func ExampleRegisteredDomain() {
	fmt.Println(urlnorm.RegisteredDomain("www.shop.example.co.uk"))
	fmt.Println(urlnorm.RegisteredDomain("localhost"))
	// Output:
	// example.co.uk
	// localhost
}
