// Counts the page's images that failed to load into data-broken-images on <body> (the browser test reads it).
window.addEventListener("load", () => {
  const broken = [...document.images].filter((i) => !i.complete || i.naturalWidth === 0).length;
  document.body.dataset.brokenImages = String(broken);
});
