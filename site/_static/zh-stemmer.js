// Sphinx 9's Chinese search data says `window.Stemmer = ChineseStemmer` but ships only the
// English stemmer (Chinese words are split by jieba at build time and need no stemming), so
// the Chinese pages threw a ReferenceError. Loaded before language_data.js: the Latin words of
// a Chinese page are stemmed as English, as Sphinx intends.
window.ChineseStemmer = function () { return new EnglishStemmer(); };
